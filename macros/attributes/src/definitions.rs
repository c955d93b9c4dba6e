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
    #[cfg_attr(not(test), expect(dead_code, reason = "read by the registry test"))]
    pub controller_gen: &'static [&'static str],
    pub role: Role,
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
    ($name:literal in $group:ident, [$($place:ident),*], $repeatable:literal, [$($go:literal),*], $role:expr) => {
        Definition {
            name: $name,
            group: Group::$group,
            stands: &[$(place!($place)),*],
            repeatable: $repeatable,
            controller_gen: &[$($go),*],
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
            controller_gen: [$($go:literal),*],
            $($apply:tt)*
        }
        $($rest:tt)*
    ) => {
        definitions!(@rows [$($defs)* definition!(
            $name in $group, [$($place),*], $repeatable, [$($go),*],
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
            controller_gen: [$($go:literal),*],
        }
        $($rest:tt)*
    ) => {
        definitions!(@rows [$($defs)* definition!(
            $name in $group, [$($place),*], $repeatable, [$($go),*],
            Role::Directive(Directive::$variant)
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
            $name in $group, [$($place),*], $repeatable, [],
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
