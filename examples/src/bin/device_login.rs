//! Log codex in with a ChatGPT device code: the URL and the code are printed, and the program
//! waits until the login completes (or fails).
//!
//! ```text
//! cargo run -p codex-app-examples --bin device_login
//! ```
//!
//! The server asks auth.openai.com for the code, so this needs the network.

use std::time::Duration;

use codex_app_client::{Client, CodexCommand};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::spawn(&CodexCommand::new()).await?;
    let login = client.login_device_code().await?;
    println!(
        "Open {} and enter the code {}",
        login.verification_url().unwrap_or("?"),
        login.user_code().unwrap_or("?")
    );
    match tokio::time::timeout(Duration::from_secs(15 * 60), login.wait()).await {
        Ok(Ok(())) => println!("Logged in."),
        Ok(Err(e)) => println!("The login failed: {e}"),
        Err(_) => println!("No login within 15 minutes."),
    }
    client.shutdown(Duration::from_secs(5)).await;
    Ok(())
}
