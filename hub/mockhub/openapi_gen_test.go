package mockhub

// The generator of openapi.json: it stays in test code so that
// swaggest/openapi-go and what it links (jsonschema-go, yaml.v2) are not
// in the hubgate binary.

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/swaggest/jsonschema-go"
	"github.com/swaggest/openapi-go"
	"github.com/swaggest/openapi-go/openapi3"
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
	r := openapi3.NewReflector()
	r.Spec.Info.
		WithTitle("Device service (hubgate mock)").
		WithVersion("v1").
		WithDescription("The remote device service as hubgate's mock answers it: OAuth sign-in, User Devices and device tokens " +
			"(the real service's shapes), and under the tag \"" + TagAdmin + "\" the mock's own admin API (loopback peers only). " +
			"The SignalR device hub is at /device (its negotiate redirects to a mock Azure SignalR Service) and is not described here.\n\n" +
			"Authorize: paste an access token from `hubgate mock token` (or the admin API's POST /mock/signin), or use the Sign in button above.")
	r.Spec.WithTags(
		openapi3.Tag{Name: TagSignIn, Description: ptr("OAuth 2.0 authorization code flow, as the vendor's clients speak it")},
		openapi3.Tag{Name: TagDevice, Description: ptr("User Devices and their tokens (user bearer)")},
		openapi3.Tag{Name: TagAdmin, Description: ptr("The mock's admin API: push hub events, inject faults, read the event log (loopback peers only, no auth)")},
	)
	r.Spec.SetHTTPBearerTokenSecurity(BearerScheme, "", "The user's access token from /signin/token, `hubgate mock token` or POST /mock/signin.")
	types := map[string]reflect.Type{} // component schema name: its Go type
	r.DefaultOptions = append(r.DefaultOptions,
		jsonschema.InterceptDefName(func(t reflect.Type, _ string) string {
			name := exportedName(t.Name())
			types[name] = t
			return name
		}),
		jsonschema.InterceptSchema(func(p jsonschema.InterceptSchemaParams) (bool, error) {
			// Duration is a Go duration string in JSON.
			t := p.Value.Type()
			for t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			if t == reflect.TypeFor[Duration]() && !p.Processed {
				p.Schema.Type = nil
				p.Schema.WithType(jsonschema.String.Type()).WithExamples("10s").
					WithDescription(`A Go duration string such as "10s" or "1m30s".`)
				return true, nil
			}
			return false, nil
		}),
	)
	for _, rt := range s.apiRoutes() {
		if err := s.addOperation(r, rt); err != nil {
			return nil, fmt.Errorf("mockhub: OpenAPI for %s %s: %w", rt.method, rt.path, err)
		}
	}
	refineSchemas(r.Spec, types)
	b, err := json.MarshalIndent(r.Spec, "", "  ")
	return append(b, '\n'), err
}

func (s *Server) addOperation(r *openapi3.Reflector, rt apiRoute) (err error) {
	oc, err := r.NewOperationContext(rt.method, rt.path)
	if err != nil {
		return err
	}
	op := rt.op
	oc.SetID(op.id)
	oc.SetSummary(op.summary)
	oc.SetDescription(op.description)
	oc.SetIsDeprecated(op.deprecated)
	oc.SetTags(map[routeGroup]string{groupSignIn: TagSignIn, groupDevice: TagDevice, groupAdmin: TagAdmin}[rt.group])
	if rt.group == groupDevice {
		oc.AddSecurity(BearerScheme)
	}
	if op.params != nil {
		oc.AddReqStructure(op.params)
	}
	if op.body != nil {
		oc.AddReqStructure(op.body, openapi.WithContentType(contentJSON), openapi.WithCustomize(func(cor openapi.ContentOrReference) {
			rb := cor.(*openapi3.RequestBodyOrRef).RequestBody
			if rb == nil {
				return
			}
			rb.Required = &op.bodyRequired
			if op.requestExample != nil {
				mt := rb.Content[contentJSON]
				mt.Example = exampleValue(op.requestExample)
				rb.Content[contentJSON] = mt
			}
		}))
	}
	if op.anyBody {
		defer func() {
			// A body of any JSON value: the reflector makes none for it.
			if err != nil {
				return
			}
			o := r.Spec.Paths.MapOfPathItemValues[rt.path].MapOfOperationValues[strings.ToLower(rt.method)]
			o.RequestBody = &openapi3.RequestBodyOrRef{RequestBody: &openapi3.RequestBody{
				Description: ptr("Any JSON value."), Required: ptr(true),
				Content: map[string]openapi3.MediaType{contentJSON: {
					Schema: &openapi3.SchemaOrRef{Schema: &openapi3.Schema{}}, Example: exampleValue(op.requestExample),
				}},
			}}
			r.Spec.Paths.MapOfPathItemValues[rt.path].MapOfOperationValues[strings.ToLower(rt.method)] = o
		}()
	}
	for _, resp := range op.responses {
		opts := []openapi.ContentOption{openapi.WithHTTPStatus(resp.status), func(cu *openapi.ContentUnit) { cu.Description = resp.description }}
		ct := resp.contentType
		if resp.body != nil && ct == "" {
			ct = contentJSON
		}
		if ct != "" {
			opts = append(opts, openapi.WithContentType(ct))
		}
		opts = append(opts, openapi.WithCustomize(func(cor openapi.ContentOrReference) {
			rs := cor.(*openapi3.ResponseOrRef).Response
			if rs == nil {
				return
			}
			if resp.example != nil {
				mt := rs.Content[ct]
				mt.Example = exampleValue(resp.example)
				rs.Content[ct] = mt
			}
			for name, desc := range resp.headers {
				if rs.Headers == nil {
					rs.Headers = map[string]openapi3.HeaderOrRef{}
				}
				rs.Headers[name] = openapi3.HeaderOrRef{Header: &openapi3.Header{
					Description: ptr(desc),
					Schema:      &openapi3.SchemaOrRef{Schema: (&openapi3.Schema{}).WithType(openapi3.SchemaTypeString)},
				}}
			}
		}))
		oc.AddRespStructure(resp.body, opts...)
	}
	return r.AddOperation(oc)
}

// refineSchemas says what the Go types say and the reflector does not:
// a field without omitempty is always written, so it is required; a
// pointer to a struct may be null (UserDevice.currentProfile).
func refineSchemas(spec *openapi3.Spec, types map[string]reflect.Type) {
	for name, sr := range spec.Components.Schemas.MapOfSchemaOrRefValues {
		t, sch := types[name], sr.Schema
		if t == nil || t.Kind() != reflect.Struct || sch == nil {
			continue
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
			if prop.SchemaReference != nil && f.Type.Kind() == reflect.Pointer {
				sch.Properties[jname] = openapi3.SchemaOrRef{Schema: &openapi3.Schema{
					AllOf: []openapi3.SchemaOrRef{prop}, Nullable: ptr(true),
				}}
			}
		}
		sort.Strings(sch.Required)
		spec.Components.Schemas.MapOfSchemaOrRefValues[name] = sr
	}
}

// exampleValue is v as plain JSON (its own MarshalJSON applied), for a
// document example.
func exampleValue(v any) *any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the examples are fixed values of JSON types
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return &out
}

func exportedName(n string) string {
	if n == "" {
		return n
	}
	r := []rune(n)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}
