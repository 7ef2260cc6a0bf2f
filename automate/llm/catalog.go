package llm

import (
	"context"
	"errors"
	"math"
	"net"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hubgate/hubgate/automate"
	"github.com/hubgate/hubgate/internal/lazyregexp"
)

// Upstream flavors (Backend.FlavorID).
const (
	FlavorOllama  = "ollama"
	FlavorLlama   = "llama.cpp"
	FlavorVLLM    = "vllm"
	FlavorGeneric = "openai-compatible"
)

// upModel is one model the upstream serves.
type upModel struct {
	name       string
	family     string
	params     *float64 // billions
	sizeBytes  int64    // 0: unknown
	tools      *bool    // nil: unknown
	thinking   *bool    // nil: unknown
	contextLen int      // context window the upstream runs it with; 0: unknown
	sizeVRAM   int64    // Ollama: bytes in GPU memory while loaded
	loaded     bool     // Ollama: loaded right now (/api/ps)
}

// snapshot is what one fetch learnt about the upstream.
type snapshot struct {
	flavor      string
	models      []upModel // sorted by name
	contextSize int       // server-wide context window (llama-server n_ctx); 0: unknown
	fetchedAt   time.Time
}

func (s *snapshot) model(name string) (upModel, bool) {
	for _, m := range s.models {
		if m.name == name {
			return m, true
		}
	}
	return upModel{}, false
}

func (s *snapshot) names() []string {
	out := make([]string, len(s.models))
	for i, m := range s.models {
		out[i] = m.name
	}
	return out
}

// Wire shapes of the catalog endpoints.
type (
	ollamaVersion struct {
		Version string `json:"version"`
	}
	ollamaTags struct {
		Models []struct {
			Name    string `json:"name"`
			Model   string `json:"model"`
			Size    int64  `json:"size"`
			Details struct {
				Family        string `json:"family"`
				ParameterSize string `json:"parameter_size"`
			} `json:"details"`
			Capabilities []string `json:"capabilities"`
		} `json:"models"`
	}
	ollamaShow struct {
		Capabilities []string       `json:"capabilities"`
		ModelInfo    map[string]any `json:"model_info"`
	}
	ollamaPS struct {
		Models []struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			Size          int64  `json:"size"`
			SizeVRAM      int64  `json:"size_vram"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	openaiModels struct {
		Data []struct {
			ID          string `json:"id"`
			OwnedBy     string `json:"owned_by"`
			MaxModelLen int    `json:"max_model_len"` // vLLM
			Meta        *struct {
				NParams int64 `json:"n_params"`
				Size    int64 `json:"size"`
			} `json:"meta"` // llama-server
		} `json:"data"`
	}
	llamaProps struct {
		NCtx                      int `json:"n_ctx"`
		DefaultGenerationSettings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
)

// maxShows bounds the /api/show calls of one fetch (for Ollama builds whose
// /api/tags has no capabilities).
const maxShows = 32

// fetchSnapshot asks the upstream what it serves. Ollama is recognised by
// /api/version (llama-server also answers /api/tags, so that cannot tell);
// everything else is read from /v1/models.
func (u *upstream) fetchSnapshot(ctx context.Context) (*snapshot, error) {
	var v ollamaVersion
	err := u.getJSON(ctx, "/api/version", &v)
	var ue *UpstreamError
	if errors.As(err, &ue) && (ue.Kind == kindUnreachable || ue.Kind == kindCanceled) {
		return nil, err
	}
	if err == nil && v.Version != "" {
		return u.fetchOllama(ctx)
	}
	return u.fetchOpenAI(ctx)
}

func (u *upstream) fetchOllama(ctx context.Context) (*snapshot, error) {
	var tags ollamaTags
	if err := u.getJSON(ctx, "/api/tags", &tags); err != nil {
		return nil, err
	}
	snap := &snapshot{flavor: FlavorOllama, fetchedAt: u.now()}
	shows := 0
	for _, t := range tags.Models {
		name := t.Name
		if name == "" {
			name = t.Model
		}
		if name == "" {
			continue
		}
		m := upModel{name: name, family: t.Details.Family, sizeBytes: t.Size, params: parseParamSize(t.Details.ParameterSize)}
		caps := t.Capabilities
		if caps == nil && shows < maxShows {
			shows++
			var sh ollamaShow
			if err := u.postJSON(ctx, "/api/show", map[string]string{"model": name}, &sh); err == nil {
				caps = sh.Capabilities
			} else if ctx.Err() != nil {
				return nil, err
			}
		}
		if caps != nil {
			tools, thinking := slices.Contains(caps, "tools"), slices.Contains(caps, "thinking")
			m.tools, m.thinking = &tools, &thinking
		}
		snap.models = append(snap.models, m)
	}
	var ps ollamaPS
	if err := u.getJSON(ctx, "/api/ps", &ps); err == nil {
		for _, p := range ps.Models {
			for i := range snap.models {
				if snap.models[i].name == p.Name || snap.models[i].name == p.Model {
					snap.models[i].loaded = true
					snap.models[i].sizeVRAM = p.SizeVRAM
					snap.models[i].contextLen = p.ContextLength
				}
			}
		}
	}
	slices.SortFunc(snap.models, func(a, b upModel) int { return strings.Compare(a.name, b.name) })
	return snap, nil
}

func (u *upstream) fetchOpenAI(ctx context.Context) (*snapshot, error) {
	var list openaiModels
	if err := u.getJSON(ctx, "/v1/models", &list); err != nil {
		return nil, err
	}
	snap := &snapshot{flavor: FlavorGeneric, fetchedAt: u.now()}
	for _, d := range list.Data {
		if d.ID == "" {
			continue
		}
		switch strings.ToLower(d.OwnedBy) {
		case "llamacpp":
			snap.flavor = FlavorLlama
		case "vllm":
			snap.flavor = FlavorVLLM
		}
		m := upModel{name: d.ID, contextLen: d.MaxModelLen}
		if d.Meta != nil {
			m.sizeBytes = d.Meta.Size
			if d.Meta.NParams > 0 {
				b := round1(float64(d.Meta.NParams) / 1e9)
				m.params = &b
			}
		}
		snap.models = append(snap.models, m)
	}
	if snap.flavor == FlavorLlama {
		var props llamaProps
		if err := u.getJSON(ctx, "/props", &props); err == nil {
			snap.contextSize = props.DefaultGenerationSettings.NCtx
			if snap.contextSize == 0 {
				snap.contextSize = props.NCtx
			}
		}
	}
	slices.SortFunc(snap.models, func(a, b upModel) int { return strings.Compare(a.name, b.name) })
	return snap, nil
}

// parseParamSize reads Ollama's parameter_size ("7.6B", "494.03M") in
// billions; nil when it cannot.
func parseParamSize(s string) *float64 {
	s = strings.TrimSpace(strings.ToUpper(s))
	if s == "" {
		return nil
	}
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "B"):
		s = strings.TrimSuffix(s, "B")
	case strings.HasSuffix(s, "M"):
		s, mult = strings.TrimSuffix(s, "M"), 1e-3
	case strings.HasSuffix(s, "K"):
		s, mult = strings.TrimSuffix(s, "K"), 1e-6
	case strings.HasSuffix(s, "T"):
		s, mult = strings.TrimSuffix(s, "T"), 1e3
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 {
		return nil
	}
	f = round2(f * mult)
	return &f
}

var nameParamsRE = lazyregexp.New(`(?i)(?:^|[^a-z0-9.])(\d+(?:\.\d+)?)([bm])(?:$|[^a-z0-9])`)

// paramsFromName reads a parameter count such as "7b" or "0.5B" from a
// model name; nil when there is none.
func paramsFromName(name string) *float64 {
	m := nameParamsRE.FindStringSubmatch(name)
	if m == nil {
		return nil
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil || f <= 0 {
		return nil
	}
	if strings.EqualFold(m[2], "m") {
		f /= 1000
	}
	f = round2(f)
	return &f
}

// familyFromName derives a family from a model name when the upstream
// reports none: the base name without a .gguf suffix, up to the first
// ':', '-' or '_' ("qwen2.5:7b" -> "qwen2.5", "/m/Llama-3.1-8B.gguf" ->
// "llama").
func familyFromName(name string) string {
	s := strings.ToLower(path.Base(strings.ReplaceAll(name, "\\", "/")))
	s = strings.TrimSuffix(s, ".gguf")
	if i := strings.IndexAny(s, ":-_"); i > 0 {
		s = s[:i]
	}
	return s
}

// SizeCode maps a parameter count (billions) onto the coarse size
// selector: S below 4B, M below 10B, L below 30B, XL below 100B, XXL from
// 100B; "" when unknown.
func SizeCode(params *float64) string {
	if params == nil {
		return ""
	}
	switch p := *params; {
	case p < 4:
		return "S"
	case p < 10:
		return "M"
	case p < 30:
		return "L"
	case p < 100:
		return "XL"
	}
	return "XXL"
}

// Memory rule of availableForDevice.
const (
	bytesPerParamQ4 = 0.6e9 // bytes per billion parameters at ~4.5 bits (Q4_K_M) when the file size is unknown
	memoryOverhead  = 1.2   // weights plus KV cache and runtime buffers
)

// AvailableFor applies the availableForDevice rule: on a loopback
// upstream a model fits when its file size (else 0.6 GB per billion
// parameters) times 1.2 is at most the machine's RAM; with the size, the
// RAM or the upstream's machine unknown (a remote upstream) it is assumed
// to fit.
func AvailableFor(sizeBytes int64, params *float64, ram uint64, localUpstream bool) bool {
	if !localUpstream || ram == 0 {
		return true
	}
	need := float64(sizeBytes)
	if need <= 0 && params != nil {
		need = *params * bytesPerParamQ4
	}
	if need <= 0 {
		return true
	}
	return need*memoryOverhead <= float64(ram)
}

// isLoopbackURL reports whether the upstream runs on this machine.
func isLoopbackURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// mergeCatalog builds the catalog: the upstream's models (sorted by name,
// downloaded), then the known-but-not-downloaded models of the config that
// the upstream does not serve (in config order, downloaded false). A known
// entry fills what the upstream leaves unknown (family, parameters, size).
// Tool capability unknown to the upstream counts as true (the upstream
// then decides at run time). Selected is left false.
func mergeCatalog(snap *snapshot, known []automate.ModelOption, ram uint64, local bool) []automate.ModelOption {
	out := []automate.ModelOption{}
	served := map[string]bool{}
	knownBy := map[string]automate.ModelOption{}
	for _, k := range known {
		knownBy[strings.ToLower(k.Name)] = k
	}
	if snap != nil {
		for _, m := range snap.models {
			served[strings.ToLower(m.name)] = true
			k, isKnown := knownBy[strings.ToLower(m.name)]
			family := m.family
			if family == "" && isKnown {
				family = k.Family
			}
			if family == "" {
				family = familyFromName(m.name)
			}
			params := m.params
			if params == nil && isKnown {
				params = k.ParameterCountBillions
			}
			if params == nil {
				params = paramsFromName(m.name)
			}
			var sizeMb *float64
			if m.sizeBytes > 0 {
				v := round1(float64(m.sizeBytes) / (1 << 20))
				sizeMb = &v
			} else if isKnown && k.FileSizeMb != nil {
				sizeMb = k.FileSizeMb
			}
			sizeBytes := m.sizeBytes
			if sizeBytes == 0 && sizeMb != nil {
				sizeBytes = int64(*sizeMb * (1 << 20))
			}
			tools := true
			if m.tools != nil {
				tools = *m.tools
			}
			out = append(out, automate.ModelOption{
				Name: m.name, Family: family, SizeCode: SizeCode(params),
				ParameterCountBillions: params, FileSizeMb: sizeMb,
				SupportsTools:      tools,
				AvailableForDevice: AvailableFor(sizeBytes, params, ram, local),
				Downloaded:         true,
			})
		}
	}
	for _, k := range known {
		if served[strings.ToLower(k.Name)] {
			continue
		}
		var sizeBytes int64
		if k.FileSizeMb != nil {
			sizeBytes = int64(*k.FileSizeMb * (1 << 20))
		}
		family := k.Family
		if family == "" {
			family = familyFromName(k.Name)
		}
		params := k.ParameterCountBillions
		if params == nil {
			params = paramsFromName(k.Name)
		}
		out = append(out, automate.ModelOption{
			Name: k.Name, Family: family, SizeCode: SizeCode(params),
			ParameterCountBillions: params, FileSizeMb: k.FileSizeMb,
			SupportsTools:      k.SupportsTools,
			AvailableForDevice: AvailableFor(sizeBytes, params, ram, local),
			Downloaded:         false,
		})
	}
	return out
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }
func round2(f float64) float64 { return math.Round(f*100) / 100 }
