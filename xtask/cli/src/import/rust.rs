//! One Go API package (a group version) as Rust: each Go file that declares types becomes a
//! Rust file of the same name, each type the Rust type with the attributes its markers
//! spell, each kind `#[kubebuilder::resource(...)]` on its spec struct (or, for a kind
//! without one, on the struct of its top-level fields).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use kubebuilder::__private::schema::by_path;
use kubebuilder_attributes::schema::camel_case;
use kubebuilder_attributes::spellings::Target;
use serde_json::Value;

use super::markers::{ArgList, Translator, fields_of, string_literal, unwrapped};
use super::model::{Field, META, Markers, NamedType, Origin, Package, Type, TypeExpr};
use crate::scaffold::names::snake_case;

/// A kind a package declares, as `create api` needs it.
#[derive(Clone, Debug)]
pub struct KindDecl {
    pub kind: String,
    /// `+kubebuilder:resource:path`, when given.
    pub plural: Option<String>,
    pub namespaced: bool,
    /// Whether the Go type is the conversion hub (`Hub()`).
    pub hub: bool,
    /// Whether it converts to a hub (`ConvertTo`).
    pub spoke: bool,
}

/// A group version in Rust.
#[derive(Debug)]
pub struct Version {
    pub group: String,
    pub version: String,
    /// The Go package's directory.
    pub dir: String,
    /// File stem (the Go file's, `cronjob_types`) and Rust source.
    pub files: Vec<(String, String)>,
    pub kinds: Vec<KindDecl>,
    /// The types that derive `Default`.
    pub defaultable: BTreeSet<String>,
}

/// What cannot be imported, each `file:line: what`.
pub type Problems = Vec<String>;

/// The options of controller-gen's `crd` generator the Go project is built with.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// `crd:allowDangerousTypes=true`: float fields are allowed.
    pub allow_dangerous_types: bool,
}

/// The Rust module of each imported Go package (`crate::gateway::v1`), by import path.
pub type Modules = BTreeMap<String, String>;

/// What a translation shares with the others: the options, where each package goes, and
/// the other packages' named types.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// What the model was read from, as the Rust files say.
    pub origin: Origin,
    pub translator: &'a Translator,
    pub options: Options,
    pub modules: &'a Modules,
    pub named: &'a BTreeMap<String, NamedType>,
    /// The types of the packages translated before that derive `Default`, by import path.
    pub defaults: &'a BTreeMap<String, BTreeSet<String>>,
}

/// The module of the Kubernetes named types the API uses with a doc or markers of their own.
pub const KUBERNETES_MODULE: &str = "kubernetes";

/// The API group and version a Go package declares (`+groupName`, `+versionName` or the
/// directory's name); `None` for a package that is no API version, or one controller-gen
/// makes no CRD of (`+kubebuilder:skip`, or no kind).
pub fn group_version(package: &Package) -> Option<(String, String)> {
    if package
        .markers
        .contains_key(kubebuilder_attributes::skip::SPELLS)
        || !package.declares_kinds()
    {
        return None;
    }
    let group = package
        .markers
        .get("groupName")?
        .first()?
        .as_str()?
        .to_owned();
    let version = package
        .markers
        .get("versionName")
        .and_then(|values| values.first()?.as_str().map(str::to_owned))
        .unwrap_or_else(|| {
            package
                .path
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_owned()
        });
    Some((group, version))
}

/// The Rust of `package`, or `None` when it is not an API package (no `+groupName`).
pub fn translate(
    package: &Package,
    context: &Context<'_>,
    used_named: &mut BTreeMap<String, TypeExpr>,
    problems: &mut Problems,
) -> Option<Version> {
    let (group, version) = group_version(package)?;
    Some(translate_as(
        package,
        (group, version),
        true,
        context,
        used_named,
        problems,
    ))
}

/// The Rust of a package that is no API version but whose types the API names (as
/// external-secrets' versions all name those of `apis/meta/v1`): its types, no kind
/// (controller-gen makes no CRD without a group).
pub fn translate_shared(
    package: &Package,
    context: &Context<'_>,
    used_named: &mut BTreeMap<String, TypeExpr>,
    problems: &mut Problems,
) -> Version {
    translate_as(
        package,
        (String::new(), String::new()),
        false,
        context,
        used_named,
        problems,
    )
}

fn translate_as(
    package: &Package,
    (group, version): (String, String),
    with_kinds: bool,
    context: &Context<'_>,
    used_named: &mut BTreeMap<String, TypeExpr>,
    problems: &mut Problems,
) -> Version {
    let mut writer = Writer::new(package, (&group, &version), context, used_named, problems);
    if with_kinds {
        writer.find_kinds();
    }
    writer.find_defaultable();
    // Each file's items, the local types they name, and the types it declares.
    let mut by_file: BTreeMap<String, (Vec<String>, BTreeSet<String>)> = BTreeMap::new();
    let mut declared_in: BTreeMap<String, String> = BTreeMap::new();
    for ty in &package.types {
        writer.used.clear();
        if let Some(item) = writer.item(ty) {
            let stem = file_stem(&ty.position);
            declared_in.insert(ty.name.clone(), stem.clone());
            let (items, used) = by_file.entry(stem).or_default();
            items.push(item);
            used.append(&mut writer.used);
        }
    }
    let files = by_file
        .into_iter()
        .map(|(stem, (items, used))| {
            // Named through the file that declares them, not the version module's
            // re-exports: no glob is resolved through another.
            let mut elsewhere: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for name in &used {
                if let Some(file) = declared_in.get(name).filter(|file| **file != stem) {
                    elsewhere
                        .entry(file.as_str())
                        .or_default()
                        .push(name.as_str());
                }
            }
            let (mut uses, text) = shortened(&items.join("\n"), &declared_in);
            for (file, names) in elsewhere {
                uses.push(match names.as_slice() {
                    [one] => format!("use super::{file}::{one};"),
                    many => format!("use super::{file}::{{{}}};", many.join(", ")),
                });
            }
            let uses = if uses.is_empty() {
                String::new()
            } else {
                format!("{}\n\n", uses.join("\n"))
            };
            let origin = match context.origin {
                Origin::Go => format!("`{stem}.go` by `cargo kubebuilder import go`"),
                Origin::Crd => format!("`{}` by `cargo kubebuilder import crd`", package.dir),
            };
            let source = format!("//! Imported from {origin}.\n\n{uses}{text}");
            (stem, source)
        })
        .collect();
    let kinds = writer.kinds;
    let defaultable = writer.defaultable;
    Version {
        group,
        version,
        dir: package.dir.clone(),
        files,
        kinds,
        defaultable,
    }
}

/// What the resource attribute on a spec struct (or a spec-less root) says.
#[derive(Clone)]
struct Head {
    /// The root type.
    root: String,
    /// `spec = "optional"` or `"none"`; `None` for the default.
    spec: Option<&'static str>,
    status: Option<String>,
    /// The markers of the root's `spec` and `status` fields, requiredness aside, with
    /// their places.
    spec_field: Option<(Markers, String)>,
    status_field: Option<(Markers, String)>,
}

struct Writer<'a> {
    package: &'a Package,
    translator: &'a Translator,
    problems: &'a mut Problems,
    options: Options,
    modules: &'a Modules,
    named: &'a BTreeMap<String, NamedType>,
    defaults: &'a BTreeMap<String, BTreeSet<String>>,
    /// The other packages' named types this translation turned into newtypes (with their
    /// underlying types).
    used_named: &'a mut BTreeMap<String, TypeExpr>,
    group: &'a str,
    version: &'a str,
    /// The resource attribute of each type that carries one, by type name.
    heads: BTreeMap<String, Head>,
    kinds: Vec<KindDecl>,
    /// The package's types the item being written names.
    used: BTreeSet<String>,
    /// The doc of the root object's `spec` or `status` field, by the field's type: the
    /// property's description in controller-gen's CRD.
    field_docs: BTreeMap<String, String>,
    /// The package's types that derive `Default`: Go's zero value, for those whose fields
    /// all have one in Rust (not a unit enum, whose zero value `""` is none of its values).
    defaultable: BTreeSet<String>,
}

impl<'a> Writer<'a> {
    /// A writer of `package`'s types, in the group version `group_version`.
    fn new(
        package: &'a Package,
        (group, version): (&'a str, &'a str),
        context: &Context<'a>,
        used_named: &'a mut BTreeMap<String, TypeExpr>,
        problems: &'a mut Problems,
    ) -> Self {
        Writer {
            package,
            translator: context.translator,
            problems,
            options: context.options,
            modules: context.modules,
            named: context.named,
            defaults: context.defaults,
            used_named,
            group,
            version,
            heads: BTreeMap::new(),
            kinds: Vec::new(),
            used: BTreeSet::new(),
            field_docs: BTreeMap::new(),
            defaultable: BTreeSet::new(),
        }
    }

    fn local(&self, name: &str) -> Option<&Type> {
        self.package.types.iter().find(|ty| ty.name == name)
    }

    fn is_list(&self, ty: &Type) -> bool {
        ty.is_root() && ty.name.ends_with("List") && ty.fields.iter().any(|f| f.name == "Items")
    }

    /// Which type carries each kind's resource attribute.
    fn find_kinds(&mut self) {
        for ty in &self.package.types {
            if !ty.is_root() || self.is_list(ty) {
                continue;
            }
            if ty.underlying.kind != "struct" {
                self.problems.push(format!(
                    "{}: the kind {} is declared as the type {}.{}, which is no imported kind: \
                     the importer needs a kind declared as a struct (with its spec and status \
                     fields) or as a kind of the packages it reads",
                    ty.position, ty.name, ty.underlying.package, ty.underlying.name
                ));
                continue;
            }
            let own: Vec<&Field> = ty.fields.iter().filter(|f| !is_object_header(f)).collect();
            let named = |json: &str| own.iter().find(|f| f.json_name() == json);
            let spec = named("spec").and_then(|field| {
                let name = local_struct_name(&field.ty, &self.package.path)?;
                self.local(name).map(|_| (name.to_owned(), *field))
            });
            let status = named("status").and_then(|field| {
                local_struct_name(&field.ty, &self.package.path).map(str::to_owned)
            });
            for field in own.iter().filter(|f| !f.doc.trim().is_empty()) {
                if let Some(name) = local_struct_name(&field.ty, &self.package.path) {
                    self.field_docs.insert(name.to_owned(), field.doc.clone());
                }
            }
            let only_spec_and_status = own
                .iter()
                .all(|f| ["spec", "status"].contains(&f.json_name()));
            // A spec struct carries one kind's attribute; another kind of the same spec
            // (external-secrets' SecretStore and ClusterSecretStore) is a root holding it.
            let (carrier, head) = match spec {
                Some((spec_type, spec_field))
                    if only_spec_and_status && !self.heads.contains_key(&spec_type) =>
                {
                    let optional = self.is_optional(spec_field);
                    (
                        spec_type,
                        Head {
                            root: ty.name.clone(),
                            spec: optional.then_some("optional"),
                            status,
                            spec_field: property_markers(Some(spec_field)),
                            status_field: property_markers(named("status").copied()),
                        },
                    )
                }
                _ => (
                    ty.name.clone(),
                    Head {
                        root: ty.name.clone(),
                        spec: Some("none"),
                        status: None,
                        spec_field: None,
                        status_field: None,
                    },
                ),
            };
            let resource = ty
                .markers
                .get("kubebuilder:resource")
                .and_then(|v| v.first());
            let resource_field = |name: &str| {
                resource.map(unwrapped).and_then(|r| {
                    r.get(name)?
                        .as_str()
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned)
                })
            };
            self.kinds.push(KindDecl {
                kind: ty.name.clone(),
                plural: resource_field("Path"),
                namespaced: resource_field("Scope").as_deref() != Some("Cluster"),
                hub: ty.methods.iter().any(|m| m == "Hub"),
                spoke: ty.methods.iter().any(|m| m == "ConvertTo"),
            });
            self.heads.insert(carrier, head);
        }
    }

    /// Which of the package's types derive `Default`: from all of them, those with a field
    /// (or an inner type) without a default are taken out until none is left to take out.
    fn find_defaultable(&mut self) {
        let candidates = self.package.types.iter().filter(|ty| {
            !self.is_list(ty)
                && ty.underlying.kind != "interface"
                && self.enum_values(ty).is_none()
                // A root object is generated, but a spec-less one's struct.
                && (!ty.is_root() || self.heads.contains_key(&ty.name))
        });
        self.defaultable = candidates.map(|ty| ty.name.clone()).collect();
        loop {
            let blocked: Vec<String> = self
                .package
                .types
                .iter()
                .filter(|ty| self.defaultable.contains(&ty.name))
                .filter(|ty| self.zero_value_blocker(ty).is_some())
                .map(|ty| ty.name.clone())
                .collect();
            if blocked.is_empty() {
                break;
            }
            for name in blocked {
                self.defaultable.remove(&name);
            }
        }
    }

    /// Whether `name` is the struct of an optional spec, which needs a `Default` (an object
    /// without a spec reads as it): its fields without one are `Option`s.
    fn is_optional_spec(&self, name: &str) -> bool {
        self.heads
            .get(name)
            .is_some_and(|head| head.spec == Some("optional") && head.root != name)
    }

    /// The field (or inner type) of `ty` that has no default, if any.
    fn zero_value_blocker<'t>(&self, ty: &'t Type) -> Option<&'t str> {
        if self.is_optional_spec(&ty.name) {
            return None;
        }
        if ty.underlying.kind != "struct" {
            let marshals_itself = ty.methods.iter().any(|m| m == "MarshalJSON");
            return (!marshals_itself && !self.has_default(&ty.underlying)).then_some(&ty.name);
        }
        let is_header = |f: &Field| ty.is_root() && is_object_header(f);
        ty.fields
            .iter()
            .filter(|f| !is_header(f) && f.json_name() != "-")
            .find(|f| {
                // An optional field of a named type is an `Option`, absent by default.
                let as_option = f.ty.kind == "pointer"
                    || (self.is_optional(f) && !self.is_plain(&f.ty) && !f.name.is_empty());
                !as_option && !self.has_default(&f.ty)
            })
            .map(|f| {
                if f.name.is_empty() {
                    f.ty.name.as_str()
                } else {
                    f.name.as_str()
                }
            })
    }

    /// Whether the Rust type of `ty` has a `Default`.
    fn has_default(&self, ty: &TypeExpr) -> bool {
        match ty.kind.as_str() {
            "pointer" | "basic" | "slice" | "map" | "interface" => true,
            "array" => ty.len <= 32 && ty.elem.as_deref().is_some_and(|e| self.has_default(e)),
            "named" if ty.package == self.package.path => self.defaultable.contains(&ty.name),
            // Another imported package's types: those of one translated before.
            "named" if self.modules.contains_key(&ty.package) => self
                .defaults
                .get(&ty.package)
                .is_some_and(|defaultable| defaultable.contains(&ty.name)),
            "named" => match ty.underlying.as_deref() {
                // A newtype of `api/src/kubernetes.rs` (which derive it), or the underlying.
                Some(underlying) => self.described(ty) || self.has_default(underlying),
                // Kubernetes' structs have one, but its times.
                None => !["Time", "MicroTime"].contains(&ty.name.as_str()),
            },
            _ => false,
        }
    }

    /// Whether a field of this type is written as itself when optional (Go's zero value is
    /// serde's default: `omitempty` omits it), rather than as an `Option`: as `field` decides.
    fn is_plain(&self, ty: &TypeExpr) -> bool {
        match ty.kind.as_str() {
            "basic" | "slice" | "map" | "array" => true,
            "named"
                if ty.package != self.package.path
                    && !self.modules.contains_key(&ty.package)
                    && !self.described(ty) =>
            {
                ty.underlying.as_deref().is_some_and(|u| self.is_plain(u))
            }
            _ => false,
        }
    }

    /// Whether `ty` is a named string, number, list or map with a default (a newtype, or a
    /// unit enum's absence of one aside): Go's `omitempty` leaves it out when empty, as
    /// `optional` does its default.
    fn is_plain_newtype(&self, ty: &TypeExpr) -> bool {
        ty.kind == "named"
            && ty.underlying.as_deref().is_some_and(|u| self.is_plain(u))
            && self.has_default(ty)
    }

    /// Whether another package's named type has a doc or markers of its own (it is then a
    /// newtype of `api/src/kubernetes.rs`).
    fn described(&self, ty: &TypeExpr) -> bool {
        self.named
            .get(&format!("{}.{}", ty.package, ty.name))
            .is_some_and(|named| !named.doc.is_empty() || !named.markers.is_empty())
    }

    /// The Rust item for `ty`, or `None` for what the attributes generate (the root object
    /// of a kind with a spec, its list) and what is not data (interfaces).
    fn item(&mut self, ty: &Type) -> Option<String> {
        if self.is_list(ty) || ty.underlying.kind == "interface" {
            return None;
        }
        if ty.is_root() && !self.heads.contains_key(&ty.name) {
            return None;
        }
        if let Some(field) = anonymous_struct_field(ty) {
            // No CRD holds it (controller-gen refuses it in a schema, and a type naming it
            // is refused above): Go helper code, such as a view of several kinds' specs.
            eprintln!(
                "import: {}: {} has an anonymous struct field ({}), which controller-gen refuses \
                 in a schema: left out, as no kind uses it",
                ty.position, ty.name, field.position
            );
            return None;
        }
        if ty.alias {
            let target = self.rust_type(&ty.underlying, &ty.position)?;
            return Some(format!(
                "{}pub type {} = {target};\n",
                doc(&ty.doc, ""),
                ty.name
            ));
        }
        let marshals_itself =
            ty.methods.iter().any(|m| m == "MarshalJSON") && ty.underlying.kind == "struct";
        // controller-gen describes no field by the doc of a type that writes its own JSON;
        // a kind's spec and status by the root's field docs, when they have one (the type's
        // doc then stays as a comment).
        let mut out = match self.field_docs.get(&ty.name) {
            _ if marshals_itself => comment(&ty.doc),
            Some(field_doc) if field_doc != &ty.doc => {
                format!("{}{}", comment(&ty.doc), doc(field_doc, ""))
            }
            _ => doc(&ty.doc, ""),
        };
        let mut args = ArgList::default();
        let head = self.heads.get(&ty.name).cloned();
        let root_markers = head.as_ref().map(|head| {
            self.local(&head.root)
                .map(|root| {
                    (
                        root.markers.clone(),
                        root.doc.clone(),
                        root.position.clone(),
                    )
                })
                .unwrap_or_default()
        });
        let enum_values = self.enum_values(ty);
        if let Some((markers, root_doc, position)) = &root_markers {
            let head = head.as_ref().expect("root markers come from a head");
            self.resource_args(&mut args, ty, head, markers, root_doc, position);
        }
        // The type's own markers; on a spec-less root they are the root's, read above. A
        // spec struct's go in a schema attribute below the resource attribute.
        let mut own = ArgList::default();
        if head.as_ref().is_none_or(|head| head.root != ty.name) {
            for (name, values) in &ty.markers {
                if name == "kubebuilder:validation:Enum" && enum_values.is_some() {
                    continue;
                }
                if is_generation_only(name) {
                    continue;
                }
                for value in values {
                    self.schema_marker(&mut own, name, Target::Type, value, false, &ty.position);
                }
            }
        }
        if ty.underlying.kind != "struct" && has_float(&ty.underlying) {
            self.dangerous(&mut own, &ty.position);
        }
        let attribute = match (head.is_some(), own.is_empty()) {
            (true, true) => args.attribute("kubebuilder::resource", ""),
            (true, false) => format!(
                "{}{}",
                args.attribute("kubebuilder::resource", ""),
                own.attribute("kubebuilder::schema", "")
            ),
            (false, true) => "#[kubebuilder::schema]\n".to_owned(),
            (false, false) => own.attribute("kubebuilder::schema", ""),
        };
        out.push_str(&attribute);
        if self.defaultable.contains(&ty.name) {
            out.push_str("#[derive(Default)]\n");
        }
        let body = if let Some(values) = enum_values {
            self.unit_enum(ty, &values)
        } else if marshals_itself {
            Some(self_marshalled(ty))
        } else {
            match ty.underlying.kind.as_str() {
                "struct" => self.structure(ty),
                _ => {
                    let inner = self.rust_type(&ty.underlying, &ty.position)?;
                    Some(format!("pub struct {}(pub {inner});\n", ty.name))
                }
            }
        }?;
        out.push_str(&body);
        Some(out)
    }

    /// The values of a string type the markers make an enum of: its `Enum` marker's, else
    /// (with `+k8s:enum`) its constants'.
    fn enum_values(&self, ty: &Type) -> Option<Vec<String>> {
        if !is_string(&ty.underlying) {
            return None;
        }
        if let Some(values) = ty.markers.get("kubebuilder:validation:Enum") {
            return values
                .first()?
                .as_array()?
                .iter()
                .map(|value| value.as_str().map(str::to_owned))
                .collect();
        }
        ty.markers.contains_key("k8s:enum").then(|| {
            self.package
                .constants
                .get(&ty.name)
                .into_iter()
                .flatten()
                .filter_map(|constant| serde_json::from_str::<String>(&constant.value).ok())
                .collect()
        })
    }

    fn unit_enum(&self, ty: &Type, values: &[String]) -> Option<String> {
        let constants = self.package.constants.get(&ty.name);
        let mut out = format!("pub enum {} {{\n", ty.name);
        for value in values {
            let constant = constants
                .into_iter()
                .flatten()
                .find(|c| serde_json::from_str::<String>(&c.value).is_ok_and(|v| &v == value));
            if let Some(constant) = constant {
                out.push_str(&doc(&constant.doc, "    "));
            }
            let variant = upper_camel(value);
            if variant != *value {
                out.push_str(&format!(
                    "    #[serde(rename = {})]\n",
                    string_literal(value)
                ));
            }
            out.push_str(&format!("    {variant},\n"));
        }
        out.push_str("}\n");
        Some(out)
    }

    fn structure(&mut self, ty: &Type) -> Option<String> {
        let mut out = format!("pub struct {} {{\n", ty.name);
        let mut fields = Vec::new();
        for field in &ty.fields {
            if ty.is_root() && is_object_header(field) {
                continue;
            }
            if let Some(text) = self.field(field, self.is_optional_spec(&ty.name)) {
                fields.push(text);
            }
        }
        out.push_str(&fields.join("\n"));
        out.push_str("}\n");
        Some(out)
    }

    /// A field as Rust: its doc, attributes and type; `None` for a field JSON leaves out. A
    /// field of an optional spec (`in_optional_spec`), which is `Default`, whose type has no
    /// default (a unit enum's zero value `""` is none of its values) is an `Option` marked
    /// `required`: the same schema, and an object without a spec reads.
    fn field(&mut self, field: &Field, in_optional_spec: bool) -> Option<String> {
        let json = field.json_name();
        if json == "-" {
            return None;
        }
        let mut out = doc(&field.doc, "    ");
        if field.name.is_empty() && json.is_empty() {
            // An embedded struct whose fields JSON inlines.
            let ty = self.rust_type(&field.ty, &field.position)?;
            let name = snake_case(ty.rsplit("::").next().unwrap_or(&ty));
            out.push_str(&format!(
                "    #[serde(flatten)]\n    pub {}: {ty},\n",
                ident(&name)
            ));
            return Some(out);
        }
        let json = if json.is_empty() {
            field.name.as_str()
        } else {
            json
        };
        let mut args = self.field_markers(field);
        let optional = self.is_optional(field);
        let pointer = field.ty.kind == "pointer";
        let target = if pointer {
            field.ty.elem.as_deref()?
        } else {
            &field.ty
        };
        let inner = self.rust_type(target, &field.position)?;
        // Go's zero value of these is what serde's `Default` gives: omitted when empty, as
        // `omitempty` omits it. Other types are optional as an `Option`.
        let plain = is_plain_rust(&inner) || self.is_plain_newtype(target);
        let held_for_default = in_optional_spec && !optional && !self.has_default(target);
        // Go writes a field's zero value unless `omitempty` omits it (never a struct's) or
        // `omitzero` does: such an optional field is written as it is, and defaulted when
        // absent, where it has a default (else it is an `Option`, left out when absent).
        let struct_value = target.kind == "named" && target.underlying.is_none();
        let go_writes_zero = !pointer
            && !field.has_option("omitzero")
            && (struct_value || !field.has_option("omitempty"));
        let written_when_empty = optional && go_writes_zero && self.has_default(target);
        let as_option = pointer || (optional && !plain && !written_when_empty) || held_for_default;
        if let Some(word) = requiredness(field, optional, as_option) {
            args.push(&[], word.to_owned());
        }
        let ty = if as_option {
            format!("Option<{inner}>")
        } else {
            inner
        };
        if !args.is_empty() {
            out.push_str(&args.attribute("kubebuilder", "    "));
        }
        let as_string = field.has_option("string");
        if as_string && !self.json_string(field, pointer, target) {
            return None;
        }
        let written = written_when_empty && !as_option;
        out.push_str(&serde_absence(field, optional, written, as_string));
        let (name, renamed) = field_ident(json);
        if renamed {
            out.push_str(&format!(
                "    #[serde(rename = {})]\n",
                string_literal(json)
            ));
        }
        out.push_str(&format!("    pub {name}: {ty},\n"));
        Some(out)
    }

    /// The field's markers as arguments of `#[kubebuilder(...)]`, requiredness aside.
    fn field_markers(&mut self, field: &Field) -> ArgList {
        let mut args = ArgList::default();
        for (name, values) in &field.markers {
            if REQUIREDNESS.contains(&name.as_str()) {
                continue;
            }
            for value in values {
                self.schema_marker(
                    &mut args,
                    name,
                    Target::Field,
                    value,
                    false,
                    &field.position,
                );
            }
        }
        if has_float(&field.ty) {
            self.dangerous(&mut args, &field.position);
        }
        args
    }

    /// Whether a field tagged `,string` is one the import writes (a number or a bool, as
    /// Go's JSON writes it: in a string); says that the CRD disagrees, or notes the problem.
    fn json_string(&mut self, field: &Field, pointer: bool, target: &TypeExpr) -> bool {
        let number_or_bool = target.kind == "basic" && target.name != "string";
        if pointer || !number_or_bool {
            self.problems.push(format!(
                "{}: `{}` is tagged `,string`, which the import writes for a number or a bool \
                 (not a pointer) only",
                field.position, field.json
            ));
            return false;
        }
        eprintln!(
            "import: {}: `{}` is tagged `,string`: Go and the Rust type write it as a JSON \
             string, where the CRD (as controller-gen writes it) says {}",
            field.position, field.json, target.name
        );
        true
    }

    /// `allow_dangerous_types` for a float, when the options allow them.
    fn dangerous(&mut self, args: &mut ArgList, position: &str) {
        if self.options.allow_dangerous_types {
            args.push(&[], "allow_dangerous_types".to_owned());
        } else {
            self.problems.push(format!(
                "{position}: a float, which controller-gen refuses without \
                 crd:allowDangerousTypes=true: import with --allow-dangerous-types if the Go \
                 project's controller-gen has it"
            ));
        }
    }

    /// Whether controller-gen makes the field optional: a marker says so, else
    /// `omitempty`/`omitzero`, else the package's default.
    fn is_optional(&self, field: &Field) -> bool {
        let has = |names: &[&str]| names.iter().any(|n| field.markers.contains_key(*n));
        if has(&["kubebuilder:validation:Optional"]) {
            return true;
        }
        if has(&["kubebuilder:validation:Required"]) {
            return false;
        }
        if has(&["optional", "k8s:optional"]) {
            return true;
        }
        if has(&["required", "k8s:required"]) {
            return false;
        }
        self.package
            .markers
            .contains_key("kubebuilder:validation:Optional")
            || field.has_option("omitempty")
            || field.has_option("omitzero")
    }

    fn schema_marker(
        &mut self,
        args: &mut ArgList,
        name: &str,
        target: Target,
        value: &Value,
        root: bool,
        position: &str,
    ) {
        match self
            .translator
            .schema_marker(args, name, target, value, root)
        {
            Ok(Some(note)) => eprintln!("import go: {position}: {note}"),
            Ok(None) => {}
            Err(error) => self.problems.push(format!("{position}: +{name}: {error}")),
        }
    }

    /// The resource attribute's arguments: the kind's names, then the root's markers.
    fn resource_args(
        &mut self,
        args: &mut ArgList,
        carrier: &Type,
        head: &Head,
        markers: &Markers,
        root_doc: &str,
        position: &str,
    ) {
        args.push(&[], format!("group = {}", string_literal(self.group)));
        args.push(&[], format!("version = {}", string_literal(self.version)));
        args.push(&[], format!("kind = {}", string_literal(&head.root)));
        if let Some(status) = &head.status {
            self.used.insert(status.clone());
            args.push(&[], format!("status = {status}"));
        }
        if let Some(spec) = head.spec {
            args.push(&[], format!("spec = {}", string_literal(spec)));
        }
        for (list, field) in [
            ("spec_field", &head.spec_field),
            ("status_field", &head.status_field),
        ] {
            if let Some((markers, position)) = field {
                let mut inner = ArgList::default();
                for (name, values) in markers {
                    for value in values {
                        self.schema_marker(&mut inner, name, Target::Field, value, false, position);
                    }
                }
                args.push(&[], format!("{list}({})", inner.render()));
            }
        }
        // A root without a doc has no description (controller-gen writes none), not the
        // attribute's default one.
        if root_doc.is_empty() || head.root != carrier.name {
            args.push(&[], format!("doc = {}", string_literal(root_doc)));
        }
        for (name, values) in markers {
            for value in values {
                let inner = unwrapped(value);
                match name.as_str() {
                    name if is_generation_only(name) => {}
                    "kubebuilder:resource" => {
                        let names = fields_of(
                            inner,
                            &[
                                ("Path", "path"),
                                ("ShortName", "short_name"),
                                ("Categories", "categories"),
                                ("Singular", "singular"),
                                ("Scope", "scope"),
                            ],
                        );
                        if !names.is_empty() {
                            args.push(&[], format!("resource({names})"));
                        }
                    }
                    "kubebuilder:subresource:status" => {
                        args.push(&["subresource"], "status".to_owned())
                    }
                    "kubebuilder:subresource:scale" => args.push(
                        &["subresource"],
                        format!(
                            "scale({})",
                            fields_of(
                                inner,
                                &[
                                    ("SpecPath", "spec_path"),
                                    ("StatusPath", "status_path"),
                                    ("SelectorPath", "selector_path")
                                ]
                            )
                        ),
                    ),
                    "kubebuilder:printcolumn" => args.push(
                        &[],
                        format!(
                            "printcolumn({})",
                            fields_of(
                                inner,
                                &[
                                    ("Name", "name"),
                                    ("Type", "type"),
                                    ("JSONPath", "json_path"),
                                    ("Description", "description"),
                                    ("Format", "format"),
                                    ("Priority", "priority")
                                ]
                            )
                        ),
                    ),
                    "kubebuilder:storageversion" => args.push(&[], "storageversion".to_owned()),
                    "kubebuilder:unservedversion" => args.push(&[], "unservedversion".to_owned()),
                    "kubebuilder:skipversion" => args.push(&[], "skipversion".to_owned()),
                    "kubebuilder:deprecatedversion" => {
                        let warning = fields_of(inner, &[("Warning", "warning")]);
                        args.push(
                            &[],
                            if warning.is_empty() {
                                "deprecatedversion".to_owned()
                            } else {
                                format!("deprecatedversion({warning})")
                            },
                        );
                    }
                    "kubebuilder:metadata" => args.push(
                        &[],
                        format!(
                            "metadata({})",
                            fields_of(
                                inner,
                                &[("Annotations", "annotations"), ("Labels", "labels")]
                            )
                        ),
                    ),
                    "kubebuilder:selectablefield" => args.push(
                        &[],
                        format!(
                            "selectablefield({})",
                            fields_of(inner, &[("JSONPath", "json_path")])
                        ),
                    ),
                    _ => self.schema_marker(args, name, Target::Type, value, true, position),
                }
            }
        }
    }

    /// The Rust type of a Go type; `None` (a problem noted) for one the importer does not
    /// know.
    fn rust_type(&mut self, ty: &TypeExpr, position: &str) -> Option<String> {
        let known = match ty.kind.as_str() {
            "basic" => basic(&ty.name).map(str::to_owned),
            "pointer" => return self.rust_type(ty.elem.as_deref()?, position),
            "slice" => {
                let elem = ty.elem.as_deref()?;
                if elem.kind == "basic" && ["byte", "uint8"].contains(&elem.name.as_str()) {
                    Some("Vec<u8>".to_owned())
                } else {
                    Some(format!("Vec<{}>", self.rust_type(elem, position)?))
                }
            }
            "array" => Some(format!(
                "[{}; {}]",
                self.rust_type(ty.elem.as_deref()?, position)?,
                ty.len
            )),
            "map" => {
                let key = ty.key.as_deref()?;
                let key = if is_string(key) {
                    "String".to_owned()
                } else {
                    self.rust_type(key, position)?
                };
                Some(format!(
                    "std::collections::BTreeMap<{key}, {}>",
                    self.rust_type(ty.elem.as_deref()?, position)?
                ))
            }
            "interface" => Some("serde_json::Value".to_owned()),
            "named" if ty.package == self.package.path => {
                if let Some(field) = self.local(&ty.name).and_then(anonymous_struct_field) {
                    self.problems.push(format!(
                        "{position}: {} has an anonymous struct field ({}), which controller-gen \
                         refuses in a schema (\"encountered non-top-level struct\"): name its type",
                        ty.name, field.position
                    ));
                    return None;
                }
                self.used.insert(ty.name.clone());
                Some(ty.name.clone())
            }
            "named" if self.modules.contains_key(&ty.package) => {
                Some(format!("{}::{}", self.modules[&ty.package], ty.name))
            }
            // A named type of another package that is not a struct is its underlying type
            // (`corev1.ResourceName` is a string, `corev1.ResourceList` a map).
            "named" if ty.underlying.is_some() => {
                let underlying = ty.underlying.as_deref()?;
                let key = format!("{}.{}", ty.package, ty.name);
                if !self.described(ty) {
                    return self.rust_type(underlying, position);
                }
                // Its doc is a description in controller-gen's CRD: a newtype keeps it.
                self.used_named.insert(key, underlying.clone());
                Some(format!("crate::{KUBERNETES_MODULE}::{}", ty.name))
            }
            "named" => match kubernetes_type(&ty.package, &ty.name) {
                Some(path) if path == "String" || by_path::leaf(&path).is_some() => Some(path),
                Some(path) => {
                    self.problems.push(format!(
                        "{position}: {path} ({}.{}) is not among the Kubernetes types the \
                         kubebuilder crate has schemas for (kubebuilder/src/schema/k8s.rs)",
                        ty.package, ty.name
                    ));
                    return None;
                }
                None => None,
            },
            _ => None,
        };
        if known.is_none() {
            let name = if ty.package.is_empty() {
                ty.name.clone()
            } else {
                format!("{}.{}", ty.package, ty.name)
            };
            self.problems.push(format!(
                "{position}: the importer knows no Rust type for the Go type {} ({})",
                if name.is_empty() { &ty.kind } else { &name },
                ty.kind
            ));
        }
        known
    }
}

/// Markers that steer code generation only: the deepcopy and apply configuration
/// generators' (the attributes derive `Clone`), and `+k8s:enum`, which the enum is.
fn is_generation_only(name: &str) -> bool {
    name == "k8s:enum"
        || name.starts_with("kubebuilder:object:")
        || name.starts_with("k8s:deepcopy-gen")
        || name.starts_with("kubebuilder:ac:")
}

const OPTIONAL: [&str; 3] = [
    "optional",
    "k8s:optional",
    "kubebuilder:validation:Optional",
];
/// The markers whose meaning the one word of requiredness says (`+k8s:required` is
/// `non_empty`, which says more).
const REQUIREDNESS: [&str; 5] = [
    "optional",
    "k8s:optional",
    "kubebuilder:validation:Optional",
    "required",
    "kubebuilder:validation:Required",
];

/// `text` with the paths of the types it names from other crates shortened to their names,
/// and the `use` lines that import them; a name two paths share, or that a local type
/// has, stays a path.
fn shortened(text: &str, local: &BTreeMap<String, String>) -> (Vec<String>, String) {
    let mut paths = BTreeSet::new();
    for start in ["k8s_openapi::", "std::collections::", "crate::"] {
        let mut rest = text;
        while let Some(at) = rest.find(start) {
            let path: String = rest[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            rest = &rest[at + path.len()..];
            paths.insert(path);
        }
    }
    let last = |path: &str| path.rsplit("::").next().unwrap_or_default().to_owned();
    let mut uses = Vec::new();
    let mut text = text.to_owned();
    for path in &paths {
        let name = last(path);
        let shared = paths.iter().filter(|other| last(other) == name).count() > 1;
        if shared || local.contains_key(&name) {
            continue;
        }
        text = replace_path(&text, path, &name);
        uses.push(format!("use {path};"));
    }
    (uses, text)
}

/// `text` with each whole occurrence of `path` replaced by `name`.
fn replace_path(text: &str, path: &str, name: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(path) {
        let after = rest[at + path.len()..].chars().next();
        let whole = !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
        out.push_str(&rest[..at]);
        out.push_str(if whole { name } else { path });
        rest = &rest[at + path.len()..];
    }
    out.push_str(rest);
    out
}

/// A root field's markers but its requiredness (which `spec = ...` says), with its place;
/// `None` without any.
fn property_markers(field: Option<&Field>) -> Option<(Markers, String)> {
    let field = field?;
    let markers: Markers = field
        .markers
        .iter()
        .filter(|(name, _)| !REQUIREDNESS.contains(&name.as_str()))
        .map(|(name, values)| (name.clone(), values.clone()))
        .collect();
    (!markers.is_empty()).then(|| (markers, field.position.clone()))
}

/// `metav1.TypeMeta` and `metav1.ObjectMeta`, which the kind's root object has already.
fn is_object_header(field: &Field) -> bool {
    field.ty.package == META && ["TypeMeta", "ObjectMeta"].contains(&field.ty.name.as_str())
        || (field.ty.kind == "pointer"
            && field
                .ty
                .elem
                .as_deref()
                .is_some_and(|e| e.package == META && e.name == "ObjectMeta"))
}

/// Whether the Rust type `inner` is one whose `Default` is Go's zero value of it (a string,
/// a number, a list, a map, an array).
fn is_plain_rust(inner: &str) -> bool {
    ["String", "Vec<", "std::collections::BTreeMap<", "["]
        .iter()
        .any(|start| inner.starts_with(start))
        || [
            "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64",
        ]
        .contains(&inner)
}

/// The field's requiredness, one word: `optional` where Go says so or where the Rust type
/// alone would make the field required, `required` where it would make it optional
/// (`+k8s:required` is `non_empty`, required already).
fn requiredness(field: &Field, optional: bool, as_option: bool) -> Option<&'static str> {
    let marked = |names: &[&str]| names.iter().any(|n| field.markers.contains_key(*n));
    match (optional, as_option) {
        (true, false) => Some("optional"),
        (true, true) => marked(&OPTIONAL).then_some("optional"),
        (false, true) => (!marked(&["k8s:required"])).then_some("required"),
        (false, false) => {
            marked(&["required", "kubebuilder:validation:Required"]).then_some("required")
        }
    }
}

/// The serde attribute of a field Go writes when empty (`written`: defaulted when absent)
/// or tags `,string` (absent reads as zero, `omitempty` leaves zero out); empty for the
/// rest, whose absence the attributes handle.
fn serde_absence(field: &Field, optional: bool, written: bool, as_string: bool) -> String {
    if !as_string {
        return if written {
            "    #[serde(default)]\n".to_owned()
        } else {
            String::new()
        };
    }
    let absence = match (written || optional, field.has_option("omitempty")) {
        (false, _) => "",
        (true, false) => "default, ",
        (true, true) => "default, skip_serializing_if = \"kubebuilder::json_string::is_zero\", ",
    };
    format!("    #[serde({absence}with = \"kubebuilder::json_string\")]\n")
}

/// A field of `ty` whose type is (or holds) a struct declared in place.
fn anonymous_struct_field(ty: &Type) -> Option<&Field> {
    fn holds_struct(ty: &TypeExpr) -> bool {
        ty.kind == "struct"
            || [&ty.key, &ty.elem]
                .into_iter()
                .flatten()
                .any(|inner| holds_struct(inner))
    }
    ty.fields.iter().find(|field| holds_struct(&field.ty))
}

/// The name of the type of `package` that `ty` (or the pointer `ty`) names.
fn local_struct_name<'t>(ty: &'t TypeExpr, package: &str) -> Option<&'t str> {
    let ty = if ty.kind == "pointer" {
        ty.elem.as_deref()?
    } else {
        ty
    };
    (ty.kind == "named" && ty.package == package).then_some(ty.name.as_str())
}

/// The module of the other packages' named types in `used` (`crate::kubernetes`): each a
/// newtype of its underlying type with its doc and markers.
pub fn kubernetes_module(
    used: &BTreeMap<String, TypeExpr>,
    context: &Context<'_>,
    problems: &mut Problems,
) -> String {
    let package = Package {
        path: String::new(),
        dir: String::new(),
        markers: Markers::new(),
        file_markers: BTreeMap::new(),
        types: Vec::new(),
        constants: BTreeMap::new(),
    };
    let mut nested = BTreeMap::new();
    let mut writer = Writer::new(&package, ("", ""), context, &mut nested, problems);
    let mut items = vec![
        "//! Kubernetes' named types the API uses, each with the doc and markers it has in \
         Kubernetes (controller-gen writes them in the CRDs)."
            .to_owned(),
    ];
    for (key, underlying) in used {
        let name = key.rsplit('.').next().unwrap_or_default();
        let named = &context.named[key];
        let mut args = ArgList::default();
        for (marker, values) in &named.markers {
            if is_generation_only(marker) {
                continue;
            }
            for value in values {
                writer.schema_marker(&mut args, marker, Target::Type, value, false, key);
            }
        }
        let Some(inner) = writer.rust_type(underlying, key) else {
            continue;
        };
        let attribute = if args.is_empty() {
            "#[kubebuilder::schema]\n".to_owned()
        } else {
            args.attribute("kubebuilder::schema", "")
        };
        items.push(format!(
            "{}{attribute}#[derive(Default)]\npub struct {name}(pub {inner});",
            doc(&named.doc, "")
        ));
    }
    let names: BTreeMap<String, String> = used
        .keys()
        .map(|key| {
            (
                key.rsplit('.').next().unwrap_or_default().to_owned(),
                String::new(),
            )
        })
        .collect();
    let (uses, text) = shortened(&items[1..].join("\n\n"), &names);
    format!("{}\n\n{}\n\n{text}\n", items[0], uses.join("\n"))
}

/// A struct Go writes as JSON itself (`MarshalJSON`) as a newtype of the JSON its
/// `+kubebuilder:validation:Type` says it is, which serde writes as it is.
fn self_marshalled(ty: &Type) -> String {
    let json_type = ty
        .markers
        .get("kubebuilder:validation:Type")
        .and_then(|values| values.first()?.as_str());
    let inner = match json_type {
        Some("string") => "String",
        Some("integer") => "i64",
        Some("number") => "f64",
        Some("boolean") => "bool",
        _ => "serde_json::Value",
    };
    format!(
        "// Go writes {} as JSON itself (`MarshalJSON`): here it is the JSON it writes.\npub struct {}(pub {inner});\n",
        ty.name, ty.name
    )
}

/// Whether the type is or holds a float.
fn has_float(ty: &TypeExpr) -> bool {
    (ty.kind == "basic" && ty.name.starts_with("float"))
        || [&ty.elem, &ty.key, &ty.underlying]
            .into_iter()
            .flatten()
            .any(|inner| has_float(inner))
}

fn is_string(ty: &TypeExpr) -> bool {
    (ty.kind == "basic" && ty.name == "string")
        || ty
            .underlying
            .as_deref()
            .is_some_and(|u| u.kind == "basic" && u.name == "string")
}

fn basic(name: &str) -> Option<&'static str> {
    Some(match name {
        "string" => "String",
        "bool" => "bool",
        "int8" => "i8",
        "int16" => "i16",
        "int32" => "i32",
        "int64" => "i64",
        // Go's `int` and `uint` have no format in a schema, as `isize` and `usize`.
        "int" => "isize",
        "uint" => "usize",
        "uint8" | "byte" => "u8",
        "uint16" => "u16",
        "uint32" => "u32",
        "uint64" => "u64",
        "float32" => "f32",
        "float64" => "f64",
        _ => return None,
    })
}

/// The k8s-openapi path of a Kubernetes Go type with its own schema (a struct, or one of
/// apimachinery's types with custom JSON); `None` for the rest, which import as their
/// underlying type (a `corev1.ResourceList` is a map).
fn kubernetes_type(package: &str, name: &str) -> Option<String> {
    if package == "k8s.io/apimachinery/pkg/util/intstr" && name == "Type" {
        return None;
    }
    if package == META && name == "Duration" {
        // A Go duration string ("1h30m") in JSON; k8s-openapi has no type for it.
        return Some("kubebuilder::Duration".to_owned());
    }
    if package == "k8s.io/apimachinery/pkg/types" {
        return None;
    }
    let module = if let Some(rest) = package.strip_prefix("k8s.io/api/") {
        format!("k8s_openapi::api::{}", rest.replace('/', "::"))
    } else if let Some(rest) = package.strip_prefix("k8s.io/apimachinery/") {
        format!("k8s_openapi::apimachinery::{}", rest.replace('/', "::"))
    } else if let Some(rest) = package.strip_prefix("k8s.io/apiextensions-apiserver/") {
        format!(
            "k8s_openapi::apiextensions_apiserver::{}",
            rest.replace('/', "::")
        )
    } else {
        return None;
    };
    Some(format!("{module}::{name}"))
}

/// The stem of a `file:line` position's file (`cronjob_types`).
fn file_stem(position: &str) -> String {
    let file = position.rsplit_once(':').map_or(position, |(file, _)| file);
    Path::new(file)
        .file_stem()
        .map(|stem| stem.to_string_lossy().replace(['.', '-'], "_"))
        .unwrap_or_default()
}

/// Doc comment lines, each `///` at `indent`.
fn doc(text: &str, indent: &str) -> String {
    if text.trim().is_empty() {
        return String::new();
    }
    text.lines()
        .map(|line| {
            let line = line.trim_end();
            if line.is_empty() {
                format!("{indent}///\n")
            } else {
                format!("{indent}/// {line}\n")
            }
        })
        .collect()
}

/// Plain comment lines (`//`), which no description is taken from.
fn comment(text: &str) -> String {
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| format!("// {}\n", line.trim_end()))
        .collect()
}

/// A unit variant's (or a type's) name for an enum value (or a JSON name): its words in
/// UpperCamelCase (`Allow`, `IfNotPresent`, `scale-down` → `ScaleDown`).
pub fn upper_camel(value: &str) -> String {
    let mut name = String::new();
    for word in value
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            name.extend(first.to_uppercase());
            name.push_str(chars.as_str());
        }
    }
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, 'V');
    }
    name
}

/// The Rust field name for a JSON name, and whether serde needs a `rename` to write it.
fn field_ident(json: &str) -> (String, bool) {
    let cleaned: String = json
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let mut name = snake_case(&cleaned);
    if name.starts_with(|c: char| c.is_ascii_digit()) || name.is_empty() {
        name.insert(0, '_');
    }
    let name = ident(&name);
    let renamed = camel_case(&name) != json;
    (name, renamed)
}

/// `name`, raw (`r#type`) when it is a keyword; `self`, `super`, `crate` and `Self`,
/// which cannot be raw, get a trailing `_`.
fn ident(name: &str) -> String {
    if ["self", "super", "crate", "Self"].contains(&name) {
        return format!("{name}_");
    }
    if KEYWORDS.contains(&name) {
        return format!("r#{name}");
    }
    name.to_owned()
}

const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do", "dyn",
    "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let",
    "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return",
    "static", "struct", "trait", "true", "try", "type", "typeof", "unsafe", "unsized", "use",
    "virtual", "where", "while", "yield",
];
