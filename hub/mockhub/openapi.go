package mockhub

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
)

//go:generate go test -run ^TestOpenAPIDocumentGenerated$ -update-openapi .

// openAPIDocument is the mock's OpenAPI 3 document, generated from the
// route table (apiRoutes) and the Go types of the requests and answers by
// the test generator (openapi_gen_test.go), which fails when this file
// drifts from what it generates. Generated, not built at run time: the
// generator's libraries stay out of the binary. A string, so that it is
// read-only data.
//
//go:embed openapi.json
var openAPIDocument string

// BearerScheme is the name of the document's security scheme: the user's
// access token as Authorization: Bearer.
const BearerScheme = "bearer"

// OpenAPI returns the mock's OpenAPI 3 document (JSON), with the
// configured client id and device type as the parameters' examples.
func (s *Server) OpenAPI() ([]byte, error) {
	s.docOnce.Do(func() {
		s.doc, s.docErr = withParamExamples(openAPIDocument, map[string]any{
			"client_id": s.cfg.ClientID, "deviceTypeId": s.cfg.DeviceTypeID, "grant_type": "code",
		})
	})
	return s.doc, s.docErr
}

// withParamExamples returns doc with examples[name] as the example of
// every operation parameter of that name, so that "Try it out" works as
// it comes.
func withParamExamples(doc string, examples map[string]any) ([]byte, error) {
	var spec map[string]any
	if err := json.Unmarshal([]byte(doc), &spec); err != nil {
		return nil, fmt.Errorf("mockhub: the OpenAPI document: %w", err)
	}
	paths, _ := spec["paths"].(map[string]any)
	for _, item := range paths {
		ops, _ := item.(map[string]any)
		for _, op := range ops {
			o, _ := op.(map[string]any)
			params, _ := o["parameters"].([]any)
			for _, p := range params {
				param, _ := p.(map[string]any)
				name, _ := param["name"].(string)
				if v, ok := examples[name]; ok && param != nil {
					param["example"] = v
				}
			}
		}
	}
	return json.MarshalIndent(spec, "", "  ")
}

func ptr[T any](v T) *T { return &v }

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	doc, err := s.OpenAPI()
	if err != nil {
		writeProblem(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(doc)
}
