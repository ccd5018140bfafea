//! Matching the members of an old and a new list: same wire name, or a rename by the look of it.

/// Members of an old and a new list, matched up.
pub(super) struct Pairs<'a, T> {
    /// Same wire name.
    pub(super) same: Vec<(&'a T, &'a T)>,
    /// One removed and one added that look like a rename (see [`pair_up`]).
    pub(super) renamed: Vec<(&'a T, &'a T)>,
    pub(super) removed: Vec<&'a T>,
    pub(super) added: Vec<&'a T>,
}

/// Matches members by wire name; then pairs a removed and an added member as a rename when
/// their names differ only in case and separators (`has_credits` -> `hasCredits`), or when
/// they are the only member removed and the only one added, and `alike`.
pub(super) fn pair_up<'a, T>(
    old: &'a [T],
    new: &'a [T],
    wire: impl Fn(&T) -> &String,
    alike: impl Fn(&T, &T) -> bool,
) -> Pairs<'a, T> {
    let mut pairs = Pairs { same: Vec::new(), renamed: Vec::new(), removed: Vec::new(), added: Vec::new() };
    for p in old {
        match new.iter().find(|q| wire(q) == wire(p)) {
            Some(q) => pairs.same.push((p, q)),
            None => pairs.removed.push(p),
        }
    }
    pairs.added = new.iter().filter(|q| !old.iter().any(|p| wire(p) == wire(q))).collect();
    let norm =
        |s: &String| s.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase()).collect::<String>();
    let mut i = 0;
    while i < pairs.removed.len() {
        let p = pairs.removed[i];
        let spelled = |q: &T| norm(wire(q)) == norm(wire(p));
        match pairs.added.iter().position(|q| spelled(q)) {
            Some(j) if pairs.added.iter().filter(|q| spelled(q)).count() == 1 => {
                let q = pairs.added.remove(j);
                pairs.renamed.push((pairs.removed.remove(i), q));
            }
            _ => i += 1,
        }
    }
    if let ([p], [q]) = (pairs.removed.as_slice(), pairs.added.as_slice()) {
        if alike(p, q) {
            pairs.renamed.push((p, q));
            pairs.removed.clear();
            pairs.added.clear();
        }
    }
    pairs
}
