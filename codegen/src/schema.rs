//! The JSON Schema subset that `codex app-server generate-json-schema` prints, as plain Rust data.
//!
//! The model is built by hand from a [`serde_json::Value`] (not with `#[derive(Deserialize)]`)
//! so that every keyword we do not understand becomes an [`Error`] naming its JSON pointer.
//! This module knows nothing about Rust names or tokens; `$ref`s are kept as strings and
//! resolved through [`Bundle::resolve`].

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::{Error, Warning};

/// One `codex_app_server_protocol.schemas.json` bundle.
#[derive(Debug, Clone)]
pub struct Bundle {
    /// Every definition, keyed by its `$ref` string (`#/definitions/X`, `#/definitions/v2/X`).
    /// Definitions nested in a schema's own `definitions` are here too, under their pointer
    /// (`#/definitions/X/definitions/Y`).
    pub definitions: BTreeMap<String, Definition>,
    /// `$ref`s that point into the document but not at a definition
    /// (`#/definitions/X/properties/y`): valid, but not a type of their own.
    pub inner_refs: std::collections::BTreeSet<String>,
    /// Keywords the parser skipped, each with its pointer.
    pub warnings: Vec<Warning>,
}

/// A named schema of the bundle.
#[derive(Debug, Clone)]
pub struct Definition {
    /// The definition's name without namespace (`ThreadStartParams`).
    pub name: String,
    /// The `$ref` string that points at it.
    pub pointer: String,
    pub schema: Schema,
}

/// A schema: `true`/`false` or an object of keywords.
#[derive(Debug, Clone, PartialEq)]
pub enum Schema {
    Bool(bool),
    Object(Box<SchemaObject>),
}

/// The keywords we understand. Anything else is rejected while parsing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SchemaObject {
    /// JSON pointer of this schema inside the bundle (for error messages).
    pub pointer: String,
    pub title: Option<String>,
    pub description: Option<String>,
    /// `type`: one name or a list (`["string", "null"]`).
    pub types: Option<Vec<InstanceType>>,
    pub format: Option<String>,
    pub enum_values: Option<Vec<Value>>,
    pub reference: Option<String>,
    pub properties: BTreeMap<String, Schema>,
    pub required: Vec<String>,
    pub additional_properties: Option<Schema>,
    pub items: Option<Schema>,
    pub one_of: Option<Vec<Schema>>,
    pub any_of: Option<Vec<Schema>>,
    pub all_of: Option<Vec<Schema>>,
    pub default: Option<Value>,
    /// `items` as an array (a draft-07 tuple): the schema of each position.
    pub tuple_items: Option<Vec<Schema>>,
    /// `additionalItems`, next to a tuple's `items`.
    pub additional_items: Option<Schema>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    /// Keywords that can allow members besides `properties` (`patternProperties`,
    /// `if`/`then`/`else`, `dependencies`): an object schema with one keeps its other members
    /// in a map, as `additionalProperties: true` does.
    pub open_members: Vec<String>,
    /// Keywords whose meaning the generator cannot follow (`$dynamicRef`, `prefixItems`): a
    /// schema that has one is typed as any JSON value.
    pub opaque: Vec<String>,
}

/// A JSON Schema primitive type name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InstanceType {
    Null,
    Boolean,
    Object,
    Array,
    Number,
    String,
    Integer,
}

impl InstanceType {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "null" => Self::Null,
            "boolean" => Self::Boolean,
            "object" => Self::Object,
            "array" => Self::Array,
            "number" => Self::Number,
            "string" => Self::String,
            "integer" => Self::Integer,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Null => "null",
            Self::Boolean => "boolean",
            Self::Object => "object",
            Self::Array => "array",
            Self::Number => "number",
            Self::String => "string",
            Self::Integer => "integer",
        }
    }
}

/// Draft-07 keywords that carry no meaning for code generation and are accepted silently:
/// annotations, and validation that only narrows what a value of the Rust type may be
/// (`minimum`, `pattern`, `uniqueItems`, `not`, ...). Ignoring them makes a decoder accept
/// more than the schema, never less, so nothing on the wire is lost.
/// `writeOnly` (0.60.1 to 0.140.0) is an annotation for writers of the value.
const IGNORED_KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "contains",
    "not",
    "readOnly",
    "writeOnly",
    "examples",
    "contentMediaType",
    "contentEncoding",
    "deprecated",
    "dependentRequired",
    "unevaluatedItems",
];

/// Keywords that can allow members besides `properties`. Whatever they add to an object is
/// kept in its map of other members (typed any JSON value), so nothing they allow is cut down
/// to what a struct knows; what they narrow is left to the server, like other validation.
const OPEN_MEMBER_KEYWORDS: &[&str] =
    &["patternProperties", "dependencies", "dependentSchemas", "if", "then", "else", "unevaluatedProperties"];

/// Keywords of later drafts whose meaning the generator does not follow: a schema with one of
/// them is typed as any JSON value (with a warning).
const OPAQUE_KEYWORDS: &[&str] = &["prefixItems", "$dynamicRef", "$recursiveRef"];

impl Bundle {
    /// Parses a bundle. Top-level `definitions` may contain a nested namespace object
    /// (`definitions.v2`) whose entries are referenced as `#/definitions/v2/Name`.
    pub fn from_json(text: &str) -> Result<Self, Error> {
        // `Value`'s `FromStr`, compiled (optimized) in serde_json; see `releases::compact`.
        let value: Value = text.parse().map_err(|e| Error::new("", format!("bundle is not valid JSON: {e}")))?;
        let root = value.as_object().ok_or_else(|| Error::new("", "bundle is not a JSON object"))?;
        let defs = root
            .get("definitions")
            .and_then(Value::as_object)
            .ok_or_else(|| Error::new("/definitions", "bundle has no `definitions` object"))?;
        let mut cx = Parser::default();
        for (name, schema) in defs {
            let pointer = format!("#/definitions/{}", escape_pointer(name));
            if is_namespace(schema) {
                let ns = schema.as_object().expect("checked by is_namespace");
                for (inner, schema) in ns {
                    let pointer = format!("{pointer}/{}", escape_pointer(inner));
                    let schema = cx.schema(schema, &pointer)?;
                    cx.definitions.push(Definition { name: inner.clone(), pointer, schema });
                }
            } else {
                let schema = cx.schema(schema, &pointer)?;
                cx.definitions.push(Definition { name: name.clone(), pointer, schema });
            }
        }
        let definitions = cx.definitions.into_iter().map(|d| (d.pointer.clone(), d)).collect();
        let mut bundle = Bundle { definitions, inner_refs: Default::default(), warnings: cx.warnings };
        bundle.check_refs(&value)?;
        bundle.warnings.sort();
        bundle.warnings.dedup();
        Ok(bundle)
    }

    /// The definition a `$ref` points at.
    pub fn resolve(&self, reference: &str, from: &str) -> Result<&Definition, Error> {
        self.definitions
            .get(reference)
            .ok_or_else(|| Error::new(from, format!("`$ref` to `{reference}` which the bundle does not define")))
    }

    /// Every `$ref` points at a definition, or at least somewhere in the document (kept in
    /// [`Bundle::inner_refs`]). A `$ref` to a definition the bundle holds only under another
    /// namespace (codex 0.105.0 to 0.107.0 refer to `#/definitions/ThreadId`, which they hold
    /// only as `#/definitions/v2/ThreadId`) is repaired to point there, with a warning: the name
    /// is the same, and the schema it names is the one the release's own types use. Every
    /// `$ref` that points nowhere is one error that lists them all.
    fn check_refs(&mut self, document: &Value) -> Result<(), Error> {
        let mut inner = std::collections::BTreeSet::new();
        let mut repairs = BTreeMap::new();
        let mut dangling = Vec::new();
        for def in self.definitions.values() {
            def.schema.walk(&mut |s| {
                let Some(r) = &s.reference else { return };
                if self.definitions.contains_key(r) {
                    return;
                }
                if r.strip_prefix('#').and_then(|p| document.pointer(p)).is_some() {
                    inner.insert(r.clone());
                    return;
                }
                match self.same_name_elsewhere(r) {
                    Some(target) => {
                        repairs.insert(r.clone(), target);
                    }
                    None => dangling.push(format!("{}: `$ref` to `{r}` which the bundle does not define", s.pointer)),
                }
            });
        }
        if !dangling.is_empty() {
            dangling.sort();
            dangling.dedup();
            let first = dangling[0].split(": ").next().unwrap_or_default().to_owned();
            let message = if dangling.len() == 1 {
                dangling[0].split_once(": ").map_or(dangling[0].clone(), |(_, m)| m.to_owned())
            } else {
                format!("{} `$ref`s point nowhere:\n    {}", dangling.len(), dangling.join("\n    "))
            };
            return Err(Error::new(first, message));
        }
        for (from, to) in &repairs {
            self.warnings.push(Warning::new(
                from.clone(),
                format!("`$ref` to `{from}`, which the bundle holds only as `{to}`: resolved to it (same name, another namespace)"),
            ));
        }
        if !repairs.is_empty() {
            for def in self.definitions.values_mut() {
                def.schema.walk_mut(&mut |s| {
                    if let Some(to) = s.reference.as_ref().and_then(|r| repairs.get(r)) {
                        s.reference = Some(to.clone());
                    }
                });
            }
        }
        self.inner_refs = inner;
        Ok(())
    }

    /// The one definition named as `reference`'s last segment under another namespace.
    fn same_name_elsewhere(&self, reference: &str) -> Option<String> {
        let name = reference.rsplit('/').next()?;
        let mut found = self.definitions.values().filter(|d| d.name == name).map(|d| d.pointer.clone());
        let one = found.next()?;
        found.next().is_none().then_some(one)
    }
}

/// A nested namespace (`definitions.v2`) is an object of schemas that has no schema keyword
/// of its own.
fn is_namespace(value: &Value) -> bool {
    let Some(obj) = value.as_object() else { return false };
    !obj.is_empty()
        && obj.values().all(|v| v.is_object())
        && !obj.keys().any(|k| KNOWN_KEYWORDS.contains(&k.as_str()) || IGNORED_KEYWORDS.contains(&k.as_str()))
}

const KNOWN_KEYWORDS: &[&str] = &[
    "title",
    "description",
    "type",
    "format",
    "enum",
    "const",
    "$ref",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "oneOf",
    "anyOf",
    "allOf",
    "default",
    "definitions",
];

/// The parser's state: definitions found nested inside schemas, and warnings.
#[derive(Default)]
struct Parser {
    definitions: Vec<Definition>,
    warnings: Vec<Warning>,
}

impl Parser {
    fn schema(&mut self, value: &Value, pointer: &str) -> Result<Schema, Error> {
        match value {
            Value::Bool(b) => Ok(Schema::Bool(*b)),
            Value::Object(map) => self.object(map, pointer).map(|o| Schema::Object(Box::new(o))),
            other => Err(Error::new(pointer, format!("expected a schema (object or boolean), found {other}"))),
        }
    }

    fn object(&mut self, map: &Map<String, Value>, pointer: &str) -> Result<SchemaObject, Error> {
        let mut out = SchemaObject { pointer: pointer.to_owned(), ..SchemaObject::default() };
        for (key, value) in map {
            let here = format!("{pointer}/{}", escape_pointer(key));
            match key.as_str() {
                "title" => out.title = Some(string(value, &here)?),
                "description" => out.description = Some(string(value, &here)?),
                "format" => out.format = Some(string(value, &here)?),
                "$ref" => out.reference = Some(string(value, &here)?),
                "default" => out.default = Some(value.clone()),
                "type" => out.types = Some(parse_types(value, &here)?),
                "enum" => match value {
                    Value::Array(values) if !values.is_empty() => out.enum_values = Some(values.clone()),
                    _ => return Err(Error::new(&here, "`enum` must be a non-empty array")),
                },
                // `const: X` is `enum: [X]`.
                "const" => out.enum_values = Some(vec![value.clone()]),
                "required" => {
                    let list = value.as_array().ok_or_else(|| Error::new(&here, "`required` must be an array"))?;
                    out.required = list
                        .iter()
                        .map(|v| {
                            v.as_str()
                                .map(str::to_owned)
                                .ok_or_else(|| Error::new(&here, "`required` must list strings"))
                        })
                        .collect::<Result<_, _>>()?;
                }
                "properties" => {
                    let props = value.as_object().ok_or_else(|| Error::new(&here, "`properties` must be an object"))?;
                    for (name, schema) in props {
                        let p = format!("{here}/{}", escape_pointer(name));
                        let schema = self.schema(schema, &p)?;
                        out.properties.insert(name.clone(), schema);
                    }
                }
                "additionalProperties" => out.additional_properties = Some(self.schema(value, &here)?),
                "items" => match value {
                    Value::Array(list) => {
                        let items = list.iter().enumerate().map(|(i, s)| self.schema(s, &format!("{here}/{i}")));
                        out.tuple_items = Some(items.collect::<Result<_, _>>()?);
                    }
                    _ => out.items = Some(self.schema(value, &here)?),
                },
                "additionalItems" => out.additional_items = Some(self.schema(value, &here)?),
                "minItems" => out.min_items = value.as_u64(),
                "maxItems" => out.max_items = value.as_u64(),
                "oneOf" => out.one_of = Some(self.list(value, &here)?),
                "anyOf" => out.any_of = Some(self.list(value, &here)?),
                "allOf" => out.all_of = Some(self.list(value, &here)?),
                // A schema's own `definitions`: definitions like the bundle's, under their pointer.
                "definitions" | "$defs" => {
                    let defs =
                        value.as_object().ok_or_else(|| Error::new(&here, format!("`{key}` must be an object")))?;
                    for (name, schema) in defs {
                        let p = format!("{here}/{}", escape_pointer(name));
                        let schema = self.schema(schema, &p)?;
                        self.definitions.push(Definition { name: name.clone(), pointer: p, schema });
                    }
                }
                k if IGNORED_KEYWORDS.contains(&k) => {}
                k if OPEN_MEMBER_KEYWORDS.contains(&k) => out.open_members.push(k.to_owned()),
                k if OPAQUE_KEYWORDS.contains(&k) => out.opaque.push(k.to_owned()),
                k => self.warnings.push(Warning::new(&here, format!("unknown keyword `{k}` ignored"))),
            }
        }
        Ok(out)
    }

    fn list(&mut self, value: &Value, pointer: &str) -> Result<Vec<Schema>, Error> {
        let list = value.as_array().ok_or_else(|| Error::new(pointer, "expected an array of schemas"))?;
        if list.is_empty() {
            return Err(Error::new(pointer, "empty list of schemas"));
        }
        list.iter().enumerate().map(|(i, s)| self.schema(s, &format!("{pointer}/{i}"))).collect()
    }
}

fn parse_types(value: &Value, pointer: &str) -> Result<Vec<InstanceType>, Error> {
    let one = |v: &Value| {
        v.as_str().and_then(InstanceType::parse).ok_or_else(|| Error::new(pointer, format!("unknown `type` {v}")))
    };
    match value {
        Value::Array(list) if !list.is_empty() => list.iter().map(one).collect(),
        Value::String(_) => Ok(vec![one(value)?]),
        _ => Err(Error::new(pointer, "`type` must be a string or a non-empty array of strings")),
    }
}

fn string(value: &Value, pointer: &str) -> Result<String, Error> {
    value.as_str().map(str::to_owned).ok_or_else(|| Error::new(pointer, "expected a string"))
}

/// RFC 6901 escaping of one pointer segment.
pub fn escape_pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

impl Schema {
    /// The object form, or `None` for `true`/`false`.
    pub fn as_object(&self) -> Option<&SchemaObject> {
        match self {
            Schema::Object(o) => Some(o),
            Schema::Bool(_) => None,
        }
    }

    /// Visits this schema and every subschema.
    /// [`Schema::walk`], changing what it visits.
    pub fn walk_mut(&mut self, f: &mut impl FnMut(&mut SchemaObject)) {
        let Schema::Object(o) = self else { return };
        f(o);
        for s in o.properties.values_mut() {
            s.walk_mut(f);
        }
        for s in [&mut o.additional_properties, &mut o.items, &mut o.additional_items].into_iter().flatten() {
            s.walk_mut(f);
        }
        for list in [&mut o.one_of, &mut o.any_of, &mut o.all_of, &mut o.tuple_items].into_iter().flatten() {
            for s in list {
                s.walk_mut(f);
            }
        }
    }

    pub fn walk(&self, f: &mut impl FnMut(&SchemaObject)) {
        let Schema::Object(o) = self else { return };
        f(o);
        for s in o.properties.values() {
            s.walk(f);
        }
        for s in [&o.additional_properties, &o.items, &o.additional_items].into_iter().flatten() {
            s.walk(f);
        }
        for list in [&o.one_of, &o.any_of, &o.all_of, &o.tuple_items].into_iter().flatten() {
            for s in list {
                s.walk(f);
            }
        }
    }
}

impl SchemaObject {
    /// True when `type` lists `null`, or the schema is exactly `{"type": "null"}`.
    pub fn allows_null_type(&self) -> bool {
        self.types.as_ref().is_some_and(|t| t.contains(&InstanceType::Null))
    }

    /// True for `{"type": "null"}` (with only annotations besides).
    pub fn is_null(&self) -> bool {
        self.types.as_deref() == Some(&[InstanceType::Null])
    }

    /// Semantic equality that ignores annotations (`title`, `description`, pointers).
    /// Used to accept identical definitions that appear in two namespaces.
    pub fn same_shape(&self, other: &SchemaObject) -> bool {
        fn strip(s: &Schema) -> Schema {
            match s {
                Schema::Bool(b) => Schema::Bool(*b),
                Schema::Object(o) => Schema::Object(Box::new(SchemaObject {
                    pointer: String::new(),
                    title: None,
                    description: None,
                    types: o.types.clone(),
                    format: o.format.clone(),
                    enum_values: o.enum_values.clone(),
                    reference: o.reference.as_ref().map(|r| r.rsplit('/').next().unwrap_or(r).to_owned()),
                    properties: o.properties.iter().map(|(k, v)| (k.clone(), strip(v))).collect(),
                    required: o.required.clone(),
                    additional_properties: o.additional_properties.as_ref().map(strip),
                    items: o.items.as_ref().map(strip),
                    one_of: o.one_of.as_ref().map(|l| l.iter().map(strip).collect()),
                    any_of: o.any_of.as_ref().map(|l| l.iter().map(strip).collect()),
                    all_of: o.all_of.as_ref().map(|l| l.iter().map(strip).collect()),
                    default: o.default.clone(),
                    tuple_items: o.tuple_items.as_ref().map(|l| l.iter().map(strip).collect()),
                    additional_items: o.additional_items.as_ref().map(strip),
                    min_items: o.min_items,
                    max_items: o.max_items,
                    opaque: o.opaque.clone(),
                    open_members: o.open_members.clone(),
                })),
            }
        }
        strip(&Schema::Object(Box::new(self.clone()))) == strip(&Schema::Object(Box::new(other.clone())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_keyword_is_a_warning_naming_its_pointer() {
        let b = Bundle::from_json(r#"{"definitions":{"A":{"type":"object","x-vendor":{}}}}"#).unwrap();
        assert_eq!(b.warnings, [Warning::new("#/definitions/A/x-vendor", "unknown keyword `x-vendor` ignored")]);
        let b = Bundle::from_json(r#"{"definitions":{"A":{"type":"object","patternProperties":{}}}}"#).unwrap();
        assert_eq!(b.definitions["#/definitions/A"].schema.as_object().unwrap().open_members, ["patternProperties"]);
    }

    #[test]
    fn nested_definitions_and_inner_refs() {
        let b = Bundle::from_json(
            r##"{"definitions":{"A":{"definitions":{"B":{"type":"string"}},"properties":{"b":{"$ref":"#/definitions/A/definitions/B"},"c":{"$ref":"#/definitions/A/properties/b"}}}}}"##,
        )
        .unwrap();
        assert!(b.definitions.contains_key("#/definitions/A/definitions/B"));
        assert!(b.inner_refs.contains("#/definitions/A/properties/b"));
    }

    #[test]
    fn nested_namespace_is_flattened_by_ref() {
        let b =
            Bundle::from_json(r##"{"definitions":{"A":{"$ref":"#/definitions/v2/B"},"v2":{"B":{"type":"string"}}}}"##)
                .unwrap();
        assert!(b.definitions.contains_key("#/definitions/v2/B"));
        assert_eq!(b.definitions["#/definitions/v2/B"].name, "B");
    }

    #[test]
    fn dangling_ref_is_an_error() {
        let err = Bundle::from_json(r##"{"definitions":{"A":{"properties":{"x":{"$ref":"#/definitions/Nope"}}}}}"##)
            .unwrap_err();
        assert_eq!(err.pointer, "#/definitions/A/properties/x");
    }

    #[test]
    fn a_ref_into_another_namespace_is_repaired_and_dangling_refs_are_listed_together() {
        let bundle = json!({"definitions": {
            "A": {"type": "object", "properties": {"id": {"$ref": "#/definitions/ThreadId"}}},
            "v2": {"ThreadId": {"type": "string"}}
        }});
        let b = Bundle::from_json(&bundle.to_string()).unwrap();
        assert!(b.warnings.iter().any(|w| w.message.contains("resolved to it")), "{:?}", b.warnings);
        let mut seen = Vec::new();
        b.definitions["#/definitions/A"].schema.walk(&mut |s| seen.extend(s.reference.clone()));
        assert_eq!(seen, ["#/definitions/v2/ThreadId"]);

        let broken = json!({"definitions": {
            "A": {"type": "object", "properties": {"x": {"$ref": "#/definitions/Gone"}, "y": {"$ref": "#/definitions/Lost"}}}
        }});
        let e = Bundle::from_json(&broken.to_string()).unwrap_err();
        assert!(
            e.message.contains("2 `$ref`s point nowhere") && e.message.contains("Gone") && e.message.contains("Lost"),
            "{e}"
        );
    }
}
