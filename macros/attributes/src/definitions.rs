//! The rows of `kubebuilder-markers` as the attribute macros read them: every argument of
//! `#[kubebuilder(...)]` and `#[kubebuilder::schema(...)]` (and the `validation(...)` of
//! `#[kubebuilder::resource]`), in table order.

use kubebuilder_model::schema::Kind;

use crate::args::Named;

/// One row.
#[derive(Debug)]
pub struct Definition {
    /// The Rust spelling inside its group.
    pub name: &'static str,
    /// The argument list it is written in.
    pub group: Group,
    pub stands: &'static [Place],
    pub repeatable: bool,
    /// The Go markers it spells.
    pub controller_gen: &'static [Spelled],
    /// The warning that controller-gen deprecates it, with what to write instead.
    pub deprecated: Option<&'static str>,
    pub role: Role,
}

/// A Go marker a row spells, and where controller-gen registers it.
#[derive(Debug)]
pub struct Spelled {
    /// The marker's name (`kubebuilder:validation:MaxItems`).
    pub name: &'static str,
    /// The places controller-gen registers it at, among the row's; empty for all of them.
    pub only: &'static [Place],
}

#[derive(Debug)]
pub enum Role {
    /// A schema marker: `::kubebuilder::schema::Marker::<variant>(value)`.
    Marker {
        variant: &'static str,
        /// How its value is written (see `kubebuilder-markers`).
        value: Kind,
        /// The values a `Choice` allows; empty for the other kinds.
        choices: &'static [&'static str],
        /// Whether its precondition depends on the node's type (a `const` check).
        checked: bool,
    },
    /// Read by the attribute itself.
    Directive(Directive),
    /// `name(...)`: a nested argument list.
    Group(Group),
}

/// Where an argument list sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// `#[kubebuilder(...)]` on a field.
    Field,
    /// `#[kubebuilder::schema(...)]` on a type.
    Type,
    /// `validation(items(...))`, on a field or a type.
    Items,
    /// The `validation(...)` of `#[kubebuilder::resource(...)]`: the root object.
    Resource,
}

impl Definition {
    /// Where a group's rows stand for a node at `place`: `items(...)` rows stand in `Items`.
    pub fn stands_at(&self, place: Place) -> bool {
        self.stands.contains(&place)
    }
}

impl Named for &'static Definition {
    fn name(&self) -> &'static str {
        self.name
    }

    fn repeatable(&self) -> bool {
        self.repeatable
    }
}

macro_rules! place {
    (field) => {
        Place::Field
    };
    (type) => {
        Place::Type
    };
    (items) => {
        Place::Items
    };
    (resource) => {
        Place::Resource
    };
}

macro_rules! choices {
    (Choice($($choice:literal),*)) => {
        &[$($choice),*]
    };
    ($kind:ident) => {
        &[]
    };
}

macro_rules! optional {
    () => {
        None
    };
    ($value:literal) => {
        Some($value)
    };
}

macro_rules! checked {
    (Nothing) => {
        false
    };
    ($needs:ident) => {
        true
    };
}

/// One [`Definition`], from the columns every row has.
macro_rules! definition {
    ($name:literal in $group:ident, [$($place:ident),*], $repeatable:literal,
        [$($go:literal $(($($only:ident),*))?),*], $($deprecated:literal)?, $role:expr) => {
        Definition {
            name: $name,
            group: Group::$group,
            stands: &[$(place!($place)),*],
            repeatable: $repeatable,
            controller_gen: &[$(Spelled { name: $go, only: &[$($(place!($only)),*)?] }),*],
            deprecated: optional!($($deprecated)?),
            role: $role,
        }
    };
}

/// Turns the rows into [`DEFINITIONS`], and the directive and group rows into the
/// [`Directive`] and [`Group`] enums.
macro_rules! definitions {
    // `marker` and `alias` rows (an alias has no priority and no apply code of its own).
    (@rows [$($defs:tt)*] [$($directives:ident)*] [$($groups:ident)*]
        $(#[$doc:meta])* $role:ident $variant:ident {
            name: $name:literal in $group:ident,
            value: $kind:ident $(($($choice:literal),*))?,
            stands: [$($place:ident),*],
            repeatable: $repeatable:literal,
            needs: $needs:ident $(($needs_value:ident))?,
            $(priority: $priority:literal,)?
            controller_gen: [$($go:literal $(($($only:ident),*))?),*],
            $($apply:tt)*
        }
        $($rest:tt)*
    ) => {
        definitions!(@rows [$($defs)* definition!(
            $name in $group, [$($place),*], $repeatable, [$($go $(($($only),*))?),*], ,
            Role::Marker {
                variant: stringify!($variant),
                value: Kind::$kind,
                choices: choices!($kind $(($($choice),*))?),
                checked: checked!($needs),
            }
        ),] [$($directives)*] [$($groups)*] $($rest)*);
    };
    (@rows [$($defs:tt)*] [$($directives:ident)*] [$($groups:ident)*]
        $(#[$doc:meta])* directive $variant:ident {
            name: $name:literal in $group:ident,
            value: Flag,
            stands: [$($place:ident),*],
            repeatable: $repeatable:literal,
            controller_gen: [$($go:literal $(($($only:ident),*))?),*],
            $(deprecated: $deprecated:literal,)?
        }
        $($rest:tt)*
    ) => {
        definitions!(@rows [$($defs)* definition!(
            $name in $group, [$($place),*], $repeatable, [$($go $(($($only),*))?),*],
            $($deprecated)?, Role::Directive(Directive::$variant)
        ),] [$($directives)* $variant] [$($groups)*] $($rest)*);
    };
    (@rows [$($defs:tt)*] [$($directives:ident)*] [$($groups:ident)*]
        $(#[$doc:meta])* group $variant:ident {
            name: $name:literal in $group:ident,
            stands: [$($place:ident),*],
            repeatable: $repeatable:literal,
        }
        $($rest:tt)*
    ) => {
        definitions!(@rows [$($defs)* definition!(
            $name in $group, [$($place),*], $repeatable, [], ,
            Role::Group(Group::$variant)
        ),] [$($directives)*] [$($groups)* $variant] $($rest)*);
    };
    (@rows [$($defs:tt)*] [$($directives:ident)*] [$($groups:ident)*]) => {
        /// The arguments read by the attribute itself rather than rendered as markers.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Directive {
            $($directives,)*
        }

        /// An argument list: the attribute's own (`Top`) or a nested one.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Group {
            Top,
            $($groups,)*
        }

        /// Every row, in table order.
        pub static DEFINITIONS: &[Definition] = &[$($defs)*];
    };
    // The table: start with nothing kept.
    ($($rows:tt)*) => {
        definitions!(@rows [] [] [] $($rows)*);
    };
}

kubebuilder_markers::markers!(definitions);
