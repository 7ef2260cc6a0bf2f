package llm_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubgate/hubgate/automate"
)

// TestCatalogFromOllamaAndSelect: loading until the upstream answered,
// then Ollama's models (size, family, parameters, tool capability) merged
// with known models; the select route pins a model that the next run uses.
func TestCatalogFromOllamaAndSelect(t *testing.T) {
	up := newFakeUpstream(t, "ollama",
		qwen,
		fakeModel{name: "llama3.2:3b", family: "llama", params: "3.2B", size: 2_019_393_189, caps: []string{"completion", "tools"}},
		fakeModel{name: "nomic-embed-text:latest", family: "nomic-bert", params: "137M", size: 274_302_450, caps: []string{"embedding"}},
		fakeModel{name: "giant:405b", family: "llama", params: "405B", size: 243_000_000_000, caps: []string{"completion", "tools"}},
	)
	up.ps = []psEntry{{name: "qwen3:8b", size: 6_000_000_000, vram: 6_000_000_000, contextLength: 32768}}
	gate := make(chan struct{})
	up.gate = gate
	h := newHarness(t, up.url(), func(o *harnessOpts) {
		o.engine.KnownModels = []automate.ModelOption{{Name: "qwen3:32b", Family: "qwen3", ParameterCountBillions: ptr(32.8), FileSizeMb: ptr(19000.0), SupportsTools: true}}
	})
	c := h.catalog()
	if c.Catalog.Status != automate.CatalogLoading || len(c.Data) != 0 {
		t.Fatalf("before the upstream answered: %+v", c)
	}
	close(gate)
	c = h.waitCatalog()
	byName := map[string]automate.ModelOption{}
	var names []string
	for _, m := range c.Data {
		byName[m.Name] = m
		names = append(names, m.Name)
	}
	if strings.Join(names, ",") != "giant:405b,llama3.2:3b,nomic-embed-text:latest,qwen3:8b,qwen3:32b" || c.Catalog.ModelCount != 5 {
		t.Fatalf("catalog %v", names)
	}
	q := byName["qwen3:8b"]
	if q.Family != "qwen3" || q.SizeCode != "M" || q.ParameterCountBillions == nil || *q.ParameterCountBillions != 8.2 ||
		q.FileSizeMb == nil || *q.FileSizeMb != 4959.1 || !q.SupportsTools || !q.AvailableForDevice || !q.Downloaded {
		t.Errorf("qwen3:8b %+v", q)
	}
	if e := byName["nomic-embed-text:latest"]; e.SupportsTools || e.SizeCode != "S" || *e.ParameterCountBillions != 0.14 {
		t.Errorf("embedding model %+v", e)
	}
	if g := byName["giant:405b"]; g.AvailableForDevice || g.SizeCode != "XXL" {
		t.Errorf("a 243 GB model on a 32 GiB machine %+v", g)
	}
	if k := byName["qwen3:32b"]; k.Downloaded || !k.SupportsTools || k.SizeCode != "XL" || *k.FileSizeMb != 19000 {
		t.Errorf("known model %+v", k)
	}
	// The engine's own selection: the first downloaded tool-capable model
	// that fits, by name.
	if !byName["llama3.2:3b"].Selected || byName["qwen3:8b"].Selected {
		t.Errorf("selection %+v", c.Data)
	}

	for body, want := range map[string]string{
		`{"modelName":"qwen3:32b"}`:   "Model is not downloaded",
		`{"modelName":"giant:405b"}`:  "Model is not compatible with this device",
		`{"family":"nomic-bert"}`:     "Model is not marked as tool-capable",
		`{"family":"qwen3"}`:          "Model selector is ambiguous",
		`{"modelName":"no-such:1b"}`:  "No catalog model matches",
		`{"sizeCode":"m"}`:            "",
		`{"modelName":"llama3.2:3b"}`: "",
	} {
		var m map[string]any
		json.Unmarshal([]byte(body), &m)
		r := h.do("POST", "/v1/automate/models/select", m)
		if want == "" {
			if r.status != 200 {
				t.Errorf("select %s: %d %s", body, r.status, r.body)
			}
			continue
		}
		if r.status != 400 || !strings.Contains(string(r.body), want) {
			t.Errorf("select %s: %d %s", body, r.status, r.body)
		}
	}
	// Pin qwen3:8b (size M), then run: the upstream gets that model.
	if r := h.do("POST", "/v1/automate/models/select", map[string]string{"sizeCode": "M"}); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	hl := h.health()
	if hl.ModelName == nil || *hl.ModelName != "qwen3:8b" || hl.AutomateModelSelection == nil || hl.ContextSize == nil || *hl.ContextSize != 32768 ||
		hl.Backend == nil || hl.Backend.Accelerator != "gpu" {
		t.Errorf("health after the pin %+v", hl)
	}
	up.script(reply{content: "pinned"})
	if st, rec := h.run(map[string]any{"prompt": "hi"}); st != 200 || rec.Model != "qwen3:8b" || up.seen()[0].Model != "qwen3:8b" {
		t.Fatalf("%d %+v", st, rec)
	}
	if hl := h.health(); !hl.WorkerRunning {
		t.Errorf("no warm worker after a run")
	}
	// Unpinning returns to the engine's own selection and drops the worker.
	h.do("POST", "/v1/automate/models/select", map[string]any{})
	if hl := h.health(); hl.ModelName == nil || *hl.ModelName != "llama3.2:3b" || hl.WorkerRunning || hl.ContextSize == nil || *hl.ContextSize != 32768 {
		t.Errorf("after unpinning %+v", hl)
	}
}

// TestCatalogFromV1Models: an upstream without Ollama's API is read from
// /v1/models.
func TestCatalogFromV1Models(t *testing.T) {
	up := newFakeUpstream(t, "openai", fakeModel{name: "Qwen/Qwen2.5-7B-Instruct"}, fakeModel{name: "mistral-small-24b"})
	h := newHarness(t, up.url())
	c := h.waitCatalog()
	if len(c.Data) != 2 {
		t.Fatalf("%+v", c)
	}
	m := c.Data[0]
	if m.Name != "Qwen/Qwen2.5-7B-Instruct" || m.Family != "qwen2.5" || m.SizeCode != "M" || *m.ParameterCountBillions != 7 || !m.SupportsTools || !m.Downloaded || !m.Selected || m.FileSizeMb != nil {
		t.Errorf("%+v", m)
	}
	if m := c.Data[1]; m.SizeCode != "L" || m.Family != "mistral" {
		t.Errorf("%+v", m)
	}
	if hl := h.health(); hl.Backend == nil || hl.Backend.FlavorID != "openai-compatible" || hl.Backend.Accelerator != "unknown" {
		t.Errorf("health %+v", hl)
	}
}

// TestSkillsThroughServer: selectedSkillIds are always in the system
// prompt; the relevance step adds the skills the prompt speaks of, within
// the budget.
func TestSkillsThroughServer(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "folder-report"), 0o755)
	os.WriteFile(filepath.Join(dir, "folder-report", "SKILL.md"), []byte("---\nname: Folder report\ndescription: Summarise the files of a folder into a short report\n---\nList every file, then write REPORT.md.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "email.md"), []byte("---\nname: Email drafting\ndescription: Draft polite emails\n---\nAlways sign with the user's name.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "invoices.md"), []byte("---\nname: Invoice totals\ndescription: Extract totals from invoice PDFs\n---\nSum the totals.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "broken.md"), []byte("---\nname: [unclosed\n---\nx"), 0o644)
	up := newFakeUpstream(t, "ollama", qwen)
	h := newHarness(t, up.url(), func(o *harnessOpts) { o.engine.SkillsDir = dir; o.engine.SkillBudget = 2 })

	up.script(reply{content: "ok"}, reply{content: "ok"})
	h.run(map[string]any{"prompt": "Please write a report of the files in my projects folder", "selectedSkillIds": []string{"email"}})
	sys := up.seen()[0].system()
	if !strings.Contains(sys, "Email drafting: Draft polite emails") || !strings.Contains(sys, "Always sign with the user's name.") ||
		!strings.Contains(sys, "List every file, then write REPORT.md.") || strings.Contains(sys, "Sum the totals") {
		t.Errorf("system prompt:\n%s", sys)
	}
	if strings.Index(sys, "Email drafting") > strings.Index(sys, "Folder report") {
		t.Errorf("selected skill not first")
	}
	// Budget 2 with two selected: nothing else comes in.
	h.run(map[string]any{"prompt": "report of the files in my folder", "selectedSkillIds": []string{"email", "Invoice totals"}})
	sys = up.seen()[1].system()
	if !strings.Contains(sys, "Sum the totals") || !strings.Contains(sys, "Always sign") || strings.Contains(sys, "REPORT.md") {
		t.Errorf("system prompt with the budget used by selected skills:\n%s", sys)
	}
}
