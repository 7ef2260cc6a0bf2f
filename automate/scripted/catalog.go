package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/hubgate/hubgate/automate"
)

// ErrInvalidCatalog is wrapped by LoadCatalogFile and ValidateCatalog.
var ErrInvalidCatalog = errors.New("invalid model catalog")

// ErrUnknownModel is wrapped by ActivateModel for a name not in the catalog.
var ErrUnknownModel = errors.New("no such model in the catalog")

func ptr(f float64) *float64 { return &f }

// DefaultCatalog returns the built-in catalog (a fresh copy): a model for
// every select outcome of the contract.
//
//	scripted-mini  scripted S    downloaded, tools, available  (the application's default)
//	scripted-pro   scripted L    downloaded, tools, available
//	scripted-max   scripted XL   NOT downloaded
//	scripted-text  text     S    NOT tool-capable
//	scripted-huge  huge     XXL  NOT available for this device
func DefaultCatalog() []automate.ModelOption {
	return []automate.ModelOption{
		{Name: "scripted-mini", Family: "scripted", SizeCode: "S", ParameterCountBillions: ptr(1.5), FileSizeMb: ptr(1100), SupportsTools: true, AvailableForDevice: true, Downloaded: true, Selected: true},
		{Name: "scripted-pro", Family: "scripted", SizeCode: "L", ParameterCountBillions: ptr(14), FileSizeMb: ptr(9000), SupportsTools: true, AvailableForDevice: true, Downloaded: true},
		{Name: "scripted-max", Family: "scripted", SizeCode: "XL", ParameterCountBillions: ptr(32), FileSizeMb: ptr(19800), SupportsTools: true, AvailableForDevice: true, Downloaded: false},
		{Name: "scripted-text", Family: "text", SizeCode: "S", ParameterCountBillions: ptr(1), FileSizeMb: ptr(780), SupportsTools: false, AvailableForDevice: true, Downloaded: true},
		{Name: "scripted-huge", Family: "huge", SizeCode: "XXL", ParameterCountBillions: ptr(405), FileSizeMb: ptr(243000), SupportsTools: true, AvailableForDevice: false, Downloaded: true},
	}
}

// ValidateCatalog checks that every name is non-empty and unique (ignoring
// case, as selection matches case-insensitively) and that at most one
// entry is selected.
func ValidateCatalog(models []automate.ModelOption) error {
	seen := map[string]bool{}
	selected := 0
	for i, m := range models {
		if strings.TrimSpace(m.Name) == "" {
			return fmt.Errorf("%w: entry %d has no name", ErrInvalidCatalog, i)
		}
		key := strings.ToLower(m.Name)
		if seen[key] {
			return fmt.Errorf("%w: name %q appears more than once", ErrInvalidCatalog, m.Name)
		}
		seen[key] = true
		if m.Selected {
			selected++
		}
	}
	if selected > 1 {
		return fmt.Errorf("%w: %d entries are selected, at most one may be", ErrInvalidCatalog, selected)
	}
	return nil
}

// LoadCatalogFile reads a JSON array of ModelOption (the --models FILE of
// the scripted engine), rejecting unknown fields, and validates it with
// ValidateCatalog. The selected entry, if any, is the application's
// default; with none selected the application has no preference and runs
// fail with MODEL_LOAD_FAILED until a model is activated.
func LoadCatalogFile(path string) ([]automate.ModelOption, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load catalog: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var models []automate.ModelOption
	if err := dec.Decode(&models); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidCatalog, path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: %s: trailing data after the array", ErrInvalidCatalog, path)
	}
	if models == nil {
		return nil, fmt.Errorf("%w: %s: not a JSON array", ErrInvalidCatalog, path)
	}
	if err := ValidateCatalog(models); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return models, nil
}
