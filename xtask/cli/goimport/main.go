// Command goimport prints, as JSON on standard output, what a Go kubebuilder API declares:
// for each package under the given roots, its package markers and its type declarations,
// with their doc comments, their fields (JSON tags, types as go/types resolves them) and
// their markers, parsed by controller-tools' own registry (the crd, rbac, webhook,
// deepcopy and applyconfiguration generators' markers) exactly as controller-gen reads
// them. A `+` comment line that none of those markers recognises is listed with its
// position, so that the importer can refuse it rather than drop it. `cargo kubebuilder
// import go` reads this output.
package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"

	"sigs.k8s.io/controller-tools/pkg/applyconfiguration"
	"sigs.k8s.io/controller-tools/pkg/crd"
	"sigs.k8s.io/controller-tools/pkg/deepcopy"
	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/controller-tools/pkg/markers"
	"sigs.k8s.io/controller-tools/pkg/rbac"
	"sigs.k8s.io/controller-tools/pkg/webhook"
)

// Model is the whole output.
type Model struct {
	Packages []Package `json:"packages"`
	// Named are the named types of other packages that the API's types use and that are
	// not structs (`corev1.ResourceName`), by `<package>.<name>`: their docs, which
	// controller-gen writes as their descriptions, and their markers.
	Named map[string]NamedType `json:"named"`
	// UnknownMarkers are `+` lines of doc comments that no registered marker recognises.
	UnknownMarkers []Unknown `json:"unknownMarkers"`
}

// NamedType is a named type of another package.
type NamedType struct {
	Doc     string           `json:"doc"`
	Markers map[string][]any `json:"markers"`
}

// Package is one Go package of the API.
type Package struct {
	Path    string           `json:"path"`
	Dir     string           `json:"dir"`
	Markers map[string][]any `json:"markers"`
	// FileMarkers are the package-level markers by the file they are written in (the
	// `+kubebuilder:rbac` markers of one controller's file, its webhooks' markers).
	FileMarkers map[string]map[string][]any `json:"fileMarkers"`
	Types       []Type                      `json:"types"`
	Consts      map[string][]TypedConstant  `json:"constants"`
}

// Type is one type declaration.
type Type struct {
	Name       string           `json:"name"`
	Doc        string           `json:"doc"`
	Position   string           `json:"position"`
	Markers    map[string][]any `json:"markers"`
	Underlying TypeExpr         `json:"underlying"`
	// Alias says the declaration is an alias (`type GatewaySpec = v1.GatewaySpec`), whose
	// Underlying is the type it names.
	Alias  bool    `json:"alias,omitempty"`
	Fields []Field `json:"fields,omitempty"`
	// Methods are the names of the methods declared on the type or its pointer (`Hub`,
	// `ConvertTo`, `ConvertFrom` say how it converts).
	Methods []string `json:"methods"`
}

// Field is one field of a struct type.
type Field struct {
	// Name is empty for an embedded field.
	Name     string           `json:"name"`
	Doc      string           `json:"doc"`
	Position string           `json:"position"`
	Tag      string           `json:"tag"`
	JSON     string           `json:"json"`
	Markers  map[string][]any `json:"markers"`
	Type     TypeExpr         `json:"type"`
}

// TypedConstant is a constant of a named type (the values of a Go "enum").
type TypedConstant struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Doc   string `json:"doc"`
}

// TypeExpr is a type as go/types resolves it, without expanding named types.
type TypeExpr struct {
	Kind    string    `json:"kind"`
	Name    string    `json:"name,omitempty"`
	Package string    `json:"package,omitempty"`
	Len     int64     `json:"len,omitempty"`
	Key     *TypeExpr `json:"key,omitempty"`
	Elem    *TypeExpr `json:"elem,omitempty"`
	// Underlying is a named type's underlying type when that is not a struct (a
	// `corev1.ResourceList` is a map, a `corev1.PullPolicy` a string).
	Underlying *TypeExpr `json:"underlying,omitempty"`
}

// Unknown is a marker line no generator registers.
type Unknown struct {
	Position string `json:"position"`
	Text     string `json:"text"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: goimport <package pattern>...")
		os.Exit(2)
	}
	model, err := read(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out := json.NewEncoder(os.Stdout)
	out.SetIndent("", " ")
	if err := out.Encode(model); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// registry holds every marker controller-gen's generators read.
func registry() (*markers.Registry, error) {
	reg := &markers.Registry{}
	for _, generator := range []interface {
		RegisterMarkers(*markers.Registry) error
	}{crd.Generator{}, rbac.Generator{}, webhook.Generator{}, deepcopy.Generator{}, applyconfiguration.Generator{}} {
		if err := generator.RegisterMarkers(reg); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

func read(roots []string) (*Model, error) {
	reg, err := registry()
	if err != nil {
		return nil, err
	}
	collector := &markers.Collector{Registry: reg}
	pkgs, err := loader.LoadRoots(roots...)
	if err != nil {
		return nil, err
	}
	model := &Model{Packages: []Package{}, UnknownMarkers: []Unknown{}, Named: map[string]NamedType{}}
	var failures []string
	// Type-checks each package after the packages it refers to, as controller-gen's crd
	// generator does.
	checker := &loader.TypeChecker{NodeFilters: []loader.NodeFilter{crd.Generator{}.CheckFilter()}}
	for _, pkg := range pkgs {
		checker.Check(pkg)
		seen := map[string]bool{}
		failed := false
		api := isAPIPackage(collector, pkg)
		for _, problem := range pkg.Errors {
			// controller-gen ignores type errors (its type-checking is partial); those
			// outside an API package's type declarations do not change what it reads, and
			// neither does it read them here. One inside such a declaration does.
			if problem.Kind == packages.TypeError && !(api && inTypeDeclaration(pkg, problem.Pos)) {
				continue
			}
			failed = true
			if !seen[problem.Error()] {
				seen[problem.Error()] = true
				failures = append(failures, problem.Error())
			}
		}
		if failed {
			continue
		}
		read, unknown, err := readPackage(collector, pkg)
		if err != nil {
			failures = append(failures, err.Error())
			continue
		}
		model.Packages = append(model.Packages, read)
		model.UnknownMarkers = append(model.UnknownMarkers, unknown...)
	}
	if len(failures) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(failures, "\n"))
	}
	if err := readNamed(collector, pkgs, model); err != nil {
		return nil, err
	}
	return model, nil
}

// readNamed fills model.Named: the docs and markers of the other packages' non-struct
// named types the API's types use, read from their packages as controller-gen reads them.
func readNamed(collector *markers.Collector, roots []*loader.Package, model *Model) error {
	wanted := map[string]map[string]bool{}
	var visit func(t *TypeExpr)
	visit = func(t *TypeExpr) {
		if t == nil {
			return
		}
		if t.Kind == "named" && t.Underlying != nil && t.Package != "" {
			if wanted[t.Package] == nil {
				wanted[t.Package] = map[string]bool{}
			}
			wanted[t.Package][t.Name] = true
		}
		visit(t.Key)
		visit(t.Elem)
		visit(t.Underlying)
	}
	own := map[string]bool{}
	for _, pkg := range model.Packages {
		own[pkg.Path] = true
		for i := range pkg.Types {
			visit(&pkg.Types[i].Underlying)
			for j := range pkg.Types[i].Fields {
				visit(&pkg.Types[i].Fields[j].Type)
			}
		}
	}
	imported := map[string]*loader.Package{}
	for _, root := range roots {
		for path, pkg := range root.Imports() {
			imported[path] = pkg
		}
	}
	for path, names := range wanted {
		pkg, ok := imported[path]
		if own[path] || !ok {
			continue
		}
		pkg.NeedSyntax()
		err := markers.EachType(collector, pkg, func(info *markers.TypeInfo) {
			if names[info.Name] {
				model.Named[path+"."+info.Name] = NamedType{Doc: info.Doc, Markers: values(info.Markers)}
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// isAPIPackage tells whether the package declares an API group (`+groupName`).
func isAPIPackage(collector *markers.Collector, pkg *loader.Package) bool {
	found, err := markers.PackageMarkers(collector, pkg)
	return err == nil && found.Get("groupName") != nil
}

// inTypeDeclaration tells whether the `file:line:col` position is inside one of the
// package's type declarations, interfaces and untagged fields aside (controller-gen does
// not check them).
func inTypeDeclaration(pkg *loader.Package, pos string) bool {
	parts := strings.Split(pos, ":")
	if len(parts) < 2 {
		return true
	}
	file := strings.Join(parts[:len(parts)-2], ":")
	line, err := strconv.Atoi(parts[len(parts)-2])
	if err != nil {
		return true
	}
	for _, syntax := range pkg.Syntax {
		if pkg.Fset.Position(syntax.Pos()).Filename != file {
			continue
		}
		for _, decl := range syntax.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.TYPE {
				continue
			}
			for _, spec := range gen.Specs {
				typeSpec := spec.(*ast.TypeSpec)
				if _, isInterface := typeSpec.Type.(*ast.InterfaceType); isInterface {
					continue
				}
				within := func(node ast.Node) bool {
					return pkg.Fset.Position(node.Pos()).Line <= line && line <= pkg.Fset.Position(node.End()).Line
				}
				if !within(typeSpec) {
					continue
				}
				// Fields without a JSON tag are not checked either (the type marshals
				// itself).
				if structType, isStruct := typeSpec.Type.(*ast.StructType); isStruct {
					for _, field := range structType.Fields.List {
						if within(field) {
							_, tagged := loader.ParseAstTag(field.Tag).Lookup("json")
							return tagged
						}
					}
				}
				return true
			}
		}
	}
	return false
}

func readPackage(collector *markers.Collector, pkg *loader.Package) (Package, []Unknown, error) {
	pkgMarkers, err := markers.PackageMarkers(collector, pkg)
	if err != nil {
		return Package{}, nil, err
	}
	read := Package{
		Path:        pkg.PkgPath,
		Markers:     values(pkgMarkers),
		FileMarkers: map[string]map[string][]any{},
		Types:       []Type{},
		Consts:      constants(pkg),
	}
	nodeMarkers, err := collector.MarkersInPackage(pkg)
	if err != nil {
		return Package{}, nil, err
	}
	for node, found := range nodeMarkers {
		if file, ok := node.(*ast.File); ok && len(found) > 0 {
			read.FileMarkers[pkg.Fset.Position(file.Pos()).Filename] = values(found)
		}
	}
	if len(pkg.GoFiles) > 0 {
		read.Dir = pkg.GoFiles[0][:strings.LastIndex(pkg.GoFiles[0], "/")]
	}
	unknown := unknownMarkers(collector.Registry, pkg)
	err = markers.EachType(collector, pkg, func(info *markers.TypeInfo) {
		read.Types = append(read.Types, readType(pkg, info))
	})
	return read, unknown, err
}

func readType(pkg *loader.Package, info *markers.TypeInfo) Type {
	typ := Type{
		Name:     info.Name,
		Doc:      info.Doc,
		Position: position(pkg.Fset, info.RawSpec.Pos()),
		Markers:  values(info.Markers),
		Methods:  []string{},
	}
	if object := pkg.TypesInfo.Defs[info.RawSpec.Name]; object != nil {
		if name, ok := object.(*types.TypeName); ok {
			typ.Alias = name.IsAlias()
		}
		// The type as declared (`type HTTPHeaderName HeaderName` names HeaderName, whose
		// markers controller-gen applies too), a struct or interface as such.
		typ.Underlying = expr(object.Type().Underlying())
		if declared := pkg.TypesInfo.TypeOf(info.RawSpec.Type); declared != nil {
			if _, isNamed := declared.(*types.Named); isNamed {
				typ.Underlying = expr(declared)
			}
		}
		if named, ok := object.Type().(*types.Named); ok {
			for i := 0; i < named.NumMethods(); i++ {
				typ.Methods = append(typ.Methods, named.Method(i).Name())
			}
			sort.Strings(typ.Methods)
		}
	}
	for _, field := range info.Fields {
		typ.Fields = append(typ.Fields, Field{
			Name:     field.Name,
			Doc:      field.Doc,
			Position: position(pkg.Fset, field.RawField.Pos()),
			Tag:      string(field.Tag),
			JSON:     field.Tag.Get("json"),
			Markers:  values(field.Markers),
			Type:     expr(pkg.TypesInfo.TypeOf(field.RawField.Type)),
		})
	}
	return typ
}

// values gives marker values in JSON-encodable form, by marker name.
func values(from markers.MarkerValues) map[string][]any {
	out := map[string][]any{}
	for name, list := range from {
		for _, value := range list {
			out[name] = append(out[name], encodable(value))
		}
	}
	return out
}

// encodable gives a flag marker (an empty struct) as `true`, and keeps a marker value's Go
// type name beside its value when the value is a struct with arguments, so that the
// importer knows which one it is.
func encodable(value any) any {
	typ := reflect.TypeOf(value)
	if typ.Kind() != reflect.Struct {
		return value
	}
	if typ.NumField() == 0 {
		return true
	}
	return map[string]any{"type": typ.Name(), "value": value}
}

func expr(t types.Type) TypeExpr {
	switch t := t.(type) {
	case *types.Basic:
		return TypeExpr{Kind: "basic", Name: t.Name()}
	case *types.Pointer:
		elem := expr(t.Elem())
		return TypeExpr{Kind: "pointer", Elem: &elem}
	case *types.Slice:
		elem := expr(t.Elem())
		return TypeExpr{Kind: "slice", Elem: &elem}
	case *types.Array:
		elem := expr(t.Elem())
		return TypeExpr{Kind: "array", Len: t.Len(), Elem: &elem}
	case *types.Map:
		key, elem := expr(t.Key()), expr(t.Elem())
		return TypeExpr{Kind: "map", Key: &key, Elem: &elem}
	case *types.Named:
		named := TypeExpr{Kind: "named", Name: t.Obj().Name()}
		if t.Obj().Pkg() != nil {
			named.Package = t.Obj().Pkg().Path()
		}
		if _, isStruct := t.Underlying().(*types.Struct); !isStruct {
			underlying := expr(t.Underlying())
			named.Underlying = &underlying
		}
		return named
	case *types.Alias:
		return expr(types.Unalias(t))
	case *types.Struct:
		return TypeExpr{Kind: "struct"}
	case *types.Interface:
		return TypeExpr{Kind: "interface"}
	default:
		return TypeExpr{Kind: "unsupported", Name: t.String()}
	}
}

// constants lists the package's constants of its own named types, by type name.
func constants(pkg *loader.Package) map[string][]TypedConstant {
	out := map[string][]TypedConstant{}
	for _, file := range pkg.Syntax {
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				for _, name := range spec.(*ast.ValueSpec).Names {
					constant, ok := pkg.TypesInfo.Defs[name].(*types.Const)
					if !ok {
						continue
					}
					named, ok := constant.Type().(*types.Named)
					if !ok || named.Obj().Pkg() != pkg.Types {
						continue
					}
					doc := ""
					if comments := spec.(*ast.ValueSpec).Doc; comments != nil {
						doc = strings.TrimSpace(comments.Text())
					}
					out[named.Obj().Name()] = append(out[named.Obj().Name()], TypedConstant{
						Name:  name.Name,
						Value: constant.Val().ExactString(),
						Doc:   doc,
					})
				}
			}
		}
	}
	for _, list := range out {
		sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	}
	return out
}

// unknownMarkers lists the `+` lines of the package's comments that look like markers
// (`+name` or `+name:...`, `+name=...`) and that no registered marker recognises, for
// any target. Lines of prose that merely start with `+` (a `+` followed by a space, a
// digit) are not markers.
func unknownMarkers(reg *markers.Registry, pkg *loader.Package) []Unknown {
	var unknown []Unknown
	for _, file := range pkg.Syntax {
		for _, group := range file.Comments {
			for _, comment := range group.List {
				text := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(comment.Text, "//"), "/*"))
				if !looksLikeMarker(text) {
					continue
				}
				if known(reg, text) {
					continue
				}
				unknown = append(unknown, Unknown{
					Position: position(pkg.Fset, comment.Pos()),
					Text:     text,
				})
			}
		}
	}
	return unknown
}

func looksLikeMarker(text string) bool {
	if !strings.HasPrefix(text, "+") || len(text) < 2 {
		return false
	}
	first := text[1]
	return first >= 'a' && first <= 'z' || first >= 'A' && first <= 'Z'
}

func known(reg *markers.Registry, text string) bool {
	for _, target := range []markers.TargetType{markers.DescribesPackage, markers.DescribesType, markers.DescribesField} {
		if reg.Lookup(text, target) != nil {
			return true
		}
	}
	return false
}

func position(fset *token.FileSet, pos token.Pos) string {
	at := fset.Position(pos)
	return fmt.Sprintf("%s:%d", at.Filename, at.Line)
}
