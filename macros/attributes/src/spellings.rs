//! Which Rust spelling writes each controller-gen CRD marker: the marker table's
//! `controller_gen` column, the arguments of `#[kubebuilder::resource]` and
//! `#[kubebuilder::skip]`. The registry test checks it against the pinned controller-gen's
//! registry; `cargo kubebuilder import go` translates Go markers with it.

pub use kubebuilder_model::schema::Kind;

use crate::definitions::{DEFINITIONS, Group, Place, Role};

/// What controller-gen says a marker describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Target {
    /// A package (`+groupName`).
    Package,
    /// A type.
    Type,
    /// A field.
    Field,
}

impl Target {
    /// controller-gen's word for it (`controller-gen crd -www`).
    pub fn as_str(self) -> &'static str {
        match self {
            Target::Package => "package",
            Target::Type => "type",
            Target::Field => "field",
        }
    }
}

/// A Go marker and where its Rust spelling goes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Spelling {
    /// The Go marker's name (`kubebuilder:validation:MaxItems`).
    pub go: String,
    /// What it describes.
    pub target: Target,
    /// The Rust argument, with the lists it is written in (`validation(max_items)`), or
    /// the attribute (`#[kubebuilder::skip]`).
    pub rust: String,
    /// How a marker table row's value is written; `None` for the arguments of
    /// `#[kubebuilder::resource]` and `#[kubebuilder::skip]`.
    pub value: Option<Kind>,
}

/// Every spelling, each Go marker once per target it has.
pub fn all() -> Vec<Spelling> {
    let mut spellings: Vec<Spelling> = schema_spellings().collect();
    spellings.extend(
        crate::resource::spelled_markers().map(|(go, target, rust)| Spelling {
            go,
            target,
            rust,
            value: None,
        }),
    );
    spellings.push(Spelling {
        go: crate::skip::SPELLS.to_owned(),
        target: Target::Package,
        rust: "#[kubebuilder::skip]".to_owned(),
        value: None,
    });
    spellings.sort();
    spellings.dedup();
    spellings
}

/// The marker table's rows: each at the places controller-gen registers it, and the
/// `items:` twins of the validation rows that stand in `items(...)`.
fn schema_spellings() -> impl Iterator<Item = Spelling> {
    DEFINITIONS
        .iter()
        .filter(|definition| !matches!(definition.role, Role::Group(_)))
        .flat_map(|definition| {
            definition.controller_gen.iter().flat_map(move |go| {
                let rust = written_in(definition.group, definition.name);
                let value = match definition.role {
                    Role::Marker { value, .. } => Some(value),
                    // A directive's value is always a flag.
                    Role::Directive(_) => Some(Kind::Flag),
                    Role::Group(_) => None,
                };
                let at = move |place| {
                    definition.stands_at(place) && (go.only.is_empty() || go.only.contains(&place))
                };
                let direct = [
                    (Place::Field, Target::Field),
                    (Place::Type, Target::Type),
                    (Place::Resource, Target::Type),
                ]
                .into_iter()
                .filter(move |(place, _)| at(*place))
                .map(move |(_, target)| Spelling {
                    go: go.name.to_owned(),
                    target,
                    rust: rust.clone(),
                    value,
                });
                let items = go
                    .name
                    .strip_prefix("kubebuilder:validation:")
                    .filter(|_| at(Place::Items))
                    .into_iter()
                    .flat_map(move |marker| {
                        [Target::Field, Target::Type].map(|target| Spelling {
                            go: format!("kubebuilder:validation:items:{marker}"),
                            target,
                            rust: written_in(
                                definition.group,
                                &format!("items({})", definition.name),
                            ),
                            value,
                        })
                    });
                direct.chain(items).collect::<Vec<_>>()
            })
        })
}

/// `name` as written in the list `group`: `validation(max_items)`, or `name` at the top.
fn written_in(group: Group, name: &str) -> String {
    if group == Group::Top {
        return name.to_owned();
    }
    let list = DEFINITIONS
        .iter()
        .find(|definition| matches!(definition.role, Role::Group(g) if g == group))
        .map_or("?", |definition| definition.name);
    format!("{list}({name})")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rust_of(go: &str, target: Target) -> Vec<String> {
        all()
            .into_iter()
            .filter(|spelling| spelling.go == go && spelling.target == target)
            .map(|spelling| spelling.rust)
            .collect()
    }

    #[test]
    fn each_kind_of_spelling_is_listed_with_where_it_is_written() {
        assert_eq!(
            rust_of("kubebuilder:validation:MaxItems", Target::Field),
            ["validation(max_items)"]
        );
        assert_eq!(
            rust_of("kubebuilder:validation:items:MaxLength", Target::Field),
            ["validation(items(max_length))"]
        );
        assert_eq!(rust_of("optional", Target::Field), ["optional"]);
        assert_eq!(
            rust_of("kubebuilder:subresource:status", Target::Type),
            ["#[kubebuilder::resource(subresource(status))]"]
        );
        assert_eq!(
            rust_of("groupName", Target::Package),
            ["#[kubebuilder::resource(group)]"]
        );
        assert_eq!(
            rust_of("kubebuilder:skip", Target::Package),
            ["#[kubebuilder::skip]"]
        );
    }
}
