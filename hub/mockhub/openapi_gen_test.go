package mockhub

// The generator of openapi.json, with kin-openapi (openapi3's types,
// openapi3gen's schemas of the Go types), the one OpenAPI library of the
// mock's tests (openapi_test.go validates with it too). It stays in test
// code so that it is not in the hubgate binary.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"
)

var updateOpenAPI = flag.Bool("update-openapi", false, "rewrite openapi.json from the route table")

// TestOpenAPIDocumentGenerated: the embedded openapi.json is what the
// route table and the Go types generate; -update-openapi (go generate)
// rewrites it.
func TestOpenAPIDocumentGenerated(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	got, err := s.buildOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	if *updateOpenAPI {
		if err := os.WriteFile("openapi.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(got) != openAPIDocument {
		t.Fatal("openapi.json is not what the route table generates: run go generate ./hub/mockhub")
	}
}

// buildOpenAPI generates the document from the route table (apiRoutes)
// and the Go types of the requests and answers. The parameters' examples
// are left to the server (withParamExamples).
func (s *Server) buildOpenAPI() ([]byte, error) {
	doc := &openapi3.T{
		OpenAPI: "3.0.3",
		Info: &openapi3.Info{
			Title:   "Device service (hubgate mock)",
			Version: "v1",
			Description: "The remote device service as hubgate's mock answers it: OAuth sign-in, User Devices and device tokens " +
				"(the real service's shapes), and under the tag \"" + TagAdmin + "\" the mock's own admin API (loopback peers only). " +
				"The SignalR device hub is at /device (its negotiate redirects to a mock Azure SignalR Service) and is not described here.\n\n" +
				"Authorize: paste an access token from `hubgate mock token` (or the admin API's POST /mock/signin), or use the Sign in button above.",
		},
		Tags: openapi3.Tags{
			{Name: TagSignIn, Description: "OAuth 2.0 authorization code flow, as the vendor's clients speak it"},
			{Name: TagDevice, Description: "User Devices and their tokens (user bearer)"},
			{Name: TagAdmin, Description: "The mock's admin API: push hub events, inject faults, read the event log (loopback peers only, no auth)"},
		},
		Paths: openapi3.NewPaths(),
		Components: &openapi3.Components{
			Schemas: openapi3.Schemas{},
			SecuritySchemes: openapi3.SecuritySchemes{BearerScheme: &openapi3.SecuritySchemeRef{Value: &openapi3.SecurityScheme{
				Type: "http", Scheme: "bearer",
				Description: "The user's access token from /signin/token, `hubgate mock token` or POST /mock/signin.",
			}}},
		},
	}
	g := &schemaGen{doc: doc, types: map[string]reflect.Type{}}
	g.opts = []openapi3gen.Option{
		openapi3gen.CreateComponentSchemas(openapi3gen.ExportComponentSchemasOptions{ExportComponentSchemas: true, ExportTopLevelSchema: true}),
		openapi3gen.CreateTypeNameGenerator(func(t reflect.Type) string {
			name := exportedName(t.Name())
			g.types[name] = t
			return name
		}),
		openapi3gen.SchemaCustomizer(func(_ string, t reflect.Type, tag reflect.StructTag, sch *openapi3.Schema) error {
			jsonTag, hasTag := tag.Lookup("json")
			switch {
			case t == reflect.TypeFor[Duration]():
				// Duration is a Go duration string in JSON.
				*sch = openapi3.Schema{Type: &openapi3.Types{openapi3.TypeString}, Example: "10s",
					Description: `A Go duration string such as "10s" or "1m30s".`}
			case t == reflect.TypeFor[json.RawMessage]() || t.Kind() == reflect.Interface:
				*sch = openapi3.Schema{} // any JSON value
			case (t.Kind() == reflect.Slice || t.Kind() == reflect.Map) && hasTag && !strings.Contains(jsonTag, ",omitempty"):
				sch.Nullable = true // a nil slice or map is written, as null
			case t.Kind() == reflect.Float64:
				sch.Format = ""
			}
			return nil
		}),
	}
	for _, rt := range s.apiRoutes() {
		if err := g.addOperation(rt); err != nil {
			return nil, fmt.Errorf("mockhub: OpenAPI for %s %s: %w", rt.method, rt.path, err)
		}
	}
	refineSchemas(doc, g.types)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	// Validated as loaded, its references resolved.
	loaded, err := openapi3.NewLoader().LoadFromData(b)
	if err == nil {
		err = loaded.Validate(context.Background())
	}
	if err != nil {
		return nil, fmt.Errorf("mockhub: the generated OpenAPI document: %w", err)
	}
	return append(b, '\n'), nil
}

// schemaGen builds the document's operations and schemas.
type schemaGen struct {
	doc   *openapi3.T
	opts  []openapi3gen.Option
	types map[string]reflect.Type // component schema name: its Go type
}

// schema is the schema of v's Go type (a $ref for a struct, whose
// component and those of the structs in it it adds); nil for a nil v.
func (g *schemaGen) schema(v any) (*openapi3.SchemaRef, error) {
	if v == nil {
		return nil, nil
	}
	return openapi3gen.NewSchemaRefForValue(v, g.doc.Components.Schemas, g.opts...)
}

func (g *schemaGen) addOperation(rt apiRoute) error {
	op := rt.op
	o := &openapi3.Operation{
		OperationID: op.id,
		Summary:     op.summary,
		Description: op.description,
		Deprecated:  op.deprecated,
		Tags:        []string{map[routeGroup]string{groupSignIn: TagSignIn, groupDevice: TagDevice, groupAdmin: TagAdmin}[rt.group]},
		Responses:   openapi3.NewResponsesWithCapacity(len(op.responses)),
	}
	if rt.group == groupDevice {
		o.Security = openapi3.NewSecurityRequirements().With(openapi3.NewSecurityRequirement().Authenticate(BearerScheme))
	}
	if op.params != nil {
		if err := g.addParams(o, op.params); err != nil {
			return err
		}
	}
	switch {
	case op.anyBody:
		// A body of any JSON value.
		o.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithDescription("Any JSON value.").WithRequired(true).
			WithContent(openapi3.Content{contentJSON: &openapi3.MediaType{Schema: &openapi3.SchemaRef{Value: &openapi3.Schema{}}, Example: exampleValue(op.requestExample)}})}
	case op.body != nil:
		sr, err := g.schema(op.body)
		if err != nil {
			return err
		}
		mt := &openapi3.MediaType{Schema: sr}
		if op.requestExample != nil {
			mt.Example = exampleValue(op.requestExample)
		}
		o.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(op.bodyRequired).WithContent(openapi3.Content{contentJSON: mt})}
	}
	for _, resp := range op.responses {
		r := openapi3.NewResponse().WithDescription(resp.description)
		ct := resp.contentType
		if resp.body != nil && ct == "" {
			ct = contentJSON
		}
		if ct != "" {
			sr, err := g.schema(resp.body)
			if err != nil {
				return err
			}
			mt := &openapi3.MediaType{Schema: sr}
			if resp.example != nil {
				mt.Example = exampleValue(resp.example)
			}
			if prev := o.Responses.Status(resp.status); prev != nil {
				r = prev.Value // another content type of the same status: the last one describes them
				r.Description = &resp.description
			}
			if r.Content == nil {
				r.Content = openapi3.Content{}
			}
			r.Content[ct] = mt
		}
		for name, desc := range resp.headers {
			if r.Headers == nil {
				r.Headers = openapi3.Headers{}
			}
			r.Headers[name] = &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
				Description: desc, Schema: openapi3.NewStringSchema().NewRef(),
			}}}
		}
		o.Responses.Set(strconv.Itoa(resp.status), &openapi3.ResponseRef{Value: r})
	}
	g.doc.AddOperation(rt.path, rt.method, o)
	return nil
}

// addParams adds the fields of params, a struct whose fields carry path,
// query and formData tags (with description, required, enum, minLength,
// minimum and example tags), as the operation's parameters and, for
// formData, its form body.
func (g *schemaGen) addParams(o *openapi3.Operation, params any) error {
	t := reflect.TypeOf(params)
	form := openapi3.NewObjectSchema()
	for i := range t.NumField() {
		f := t.Field(i)
		sch, err := paramSchema(f)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t.Name(), f.Name, err)
		}
		for _, in := range []string{openapi3.ParameterInQuery, openapi3.ParameterInPath} {
			if name := f.Tag.Get(in); name != "" {
				o.AddParameter(&openapi3.Parameter{Name: name, In: in, Description: sch.Description,
					Required: in == openapi3.ParameterInPath || f.Tag.Get("required") == "true", Schema: sch.NewRef()})
			}
		}
		if name := f.Tag.Get("formData"); name != "" {
			form.WithProperty(name, sch)
		}
	}
	if len(form.Properties) > 0 {
		name := "FormData" + exportedName(t.Name())
		g.doc.Components.Schemas[name] = form.NewRef()
		o.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithContent(openapi3.Content{
			"application/x-www-form-urlencoded": &openapi3.MediaType{Schema: openapi3.NewSchemaRef("#/components/schemas/"+name, nil)},
		})}
	}
	return nil
}

// paramSchema is the schema of one parameter field, from its Go type and
// its tags.
func paramSchema(f reflect.StructField) (*openapi3.Schema, error) {
	var sch *openapi3.Schema
	switch f.Type.Kind() {
	case reflect.String:
		sch = openapi3.NewStringSchema()
	case reflect.Int64:
		sch = openapi3.NewInt64Schema()
	default:
		return nil, fmt.Errorf("no parameter schema for %s", f.Type)
	}
	sch.Description = f.Tag.Get("description")
	if e := f.Tag.Get("enum"); e != "" {
		for _, v := range strings.Split(e, ",") {
			sch.Enum = append(sch.Enum, v)
		}
	}
	if v := f.Tag.Get("minLength"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, err
		}
		sch.MinLength = n
	}
	if v := f.Tag.Get("minimum"); v != "" {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, err
		}
		sch.Min = &n
	}
	if v := f.Tag.Get("example"); v != "" {
		sch.Example = v
	}
	return sch, nil
}

// refineSchemas says what the Go types say and the generator does not:
// a field without omitempty is always written, so it is required; a
// pointer to a struct may be null (UserDevice.currentProfile).
func refineSchemas(doc *openapi3.T, types map[string]reflect.Type) {
	for name, sr := range doc.Components.Schemas {
		t, sch := types[name], sr.Value
		if t == nil || t.Kind() != reflect.Struct || sch == nil {
			continue
		}
		if sch.Type == nil {
			sch.Type = &openapi3.Types{openapi3.TypeObject}
		}
		sch.Required = nil
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			jname, opts, _ := strings.Cut(tag, ",")
			if !f.IsExported() || jname == "-" {
				continue
			}
			if jname == "" {
				jname = f.Name
			}
			prop, ok := sch.Properties[jname]
			if !ok {
				continue
			}
			if !strings.Contains(","+opts+",", ",omitempty,") {
				sch.Required = append(sch.Required, jname)
			}
			if prop.Ref != "" && f.Type.Kind() == reflect.Pointer {
				sch.Properties[jname] = &openapi3.SchemaRef{Value: &openapi3.Schema{
					AllOf: openapi3.SchemaRefs{prop}, Nullable: true,
				}}
			}
		}
		sort.Strings(sch.Required)
	}
}

// exampleValue is v as plain JSON (its own MarshalJSON applied), for a
// document example.
func exampleValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the examples are fixed values of JSON types
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

func exportedName(n string) string {
	if n == "" {
		return n
	}
	r := []rune(n)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}
