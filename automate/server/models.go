package server

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/hubgate/hubgate/automate"
)

// catalog returns the engine's catalog with `selected` marking the model
// that serves the next run: the pin when there is one.
func (s *Server) catalog(ctx context.Context) (ready bool, models []automate.ModelOption, err error) {
	cat, err := s.engine.Catalog(ctx)
	if err != nil {
		return false, nil, err
	}
	s.mu.Lock()
	pin := s.pin
	s.mu.Unlock()
	models = make([]automate.ModelOption, len(cat.Models))
	copy(models, cat.Models)
	if pin != nil {
		for i := range models {
			models[i].Selected = models[i].Name == pin.Name
		}
	}
	return cat.Ready, models, nil
}

func (s *Server) handleCatalog(w http.ResponseWriter, r *http.Request) {
	ready, models, err := s.catalog(r.Context())
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	status := automate.CatalogLoading
	if ready {
		status = automate.CatalogReady
	}
	writeJSON(w, s.log, http.StatusOK, automate.CatalogResponse{
		Object: "list", Data: models, Catalog: automate.CatalogInfo{Status: status, ModelCount: len(models)},
	})
}

// matchModel applies the select rules: the supplied criteria, compared
// case-insensitively, must match exactly one entry, and that entry must be
// usable.
func matchModel(models []automate.ModelOption, req automate.SelectRequest) (automate.ModelOption, error) {
	var matches []automate.ModelOption
	for _, m := range models {
		if (req.ModelName == "" || strings.EqualFold(m.Name, req.ModelName)) &&
			(req.Family == "" || strings.EqualFold(m.Family, req.Family)) &&
			(req.SizeCode == "" || strings.EqualFold(m.SizeCode, req.SizeCode)) {
			matches = append(matches, m)
		}
	}
	switch len(matches) {
	case 0:
		return automate.ModelOption{}, invalid("No catalog model matches the requested name/family/size")
	case 1:
	default:
		names := make([]string, len(matches))
		for i, m := range matches {
			names[i] = m.Name
		}
		return automate.ModelOption{}, invalid("Model selector is ambiguous; matches: %s", strings.Join(names, ", "))
	}
	m := matches[0]
	switch {
	case !m.AvailableForDevice:
		return m, invalid("Model is not compatible with this device: %s", m.Name)
	case !m.SupportsTools:
		return m, invalid("Model is not marked as tool-capable: %s", m.Name)
	case !m.Downloaded:
		return m, invalid("Model is not downloaded. Select and download it in the application first: %s", m.Name)
	}
	return m, nil
}

func (s *Server) handleSelect(w http.ResponseWriter, r *http.Request) {
	o, ok := s.readObject(w, r, true)
	if !ok {
		return
	}
	var req automate.SelectRequest
	var err error
	for _, f := range []struct {
		key string
		dst *string
	}{{"modelName", &req.ModelName}, {"family", &req.Family}, {"sizeCode", &req.SizeCode}} {
		if *f.dst, _, err = o.str(f.key, f.key+" must be a string"); err != nil {
			writeError(w, s.log, err)
			return
		}
	}
	resp, err := s.Select(r.Context(), req)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	writeJSON(w, s.log, http.StatusOK, resp)
}

// Select pins the model the criteria match for this session, or unpins
// when every criterion is empty.
func (s *Server) Select(ctx context.Context, req automate.SelectRequest) (*automate.SelectResponse, error) {
	// Take the slot: no run may start while the model switches.
	s.mu.Lock()
	if err := s.slotRefusalLocked(); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	s.switching = true
	status := s.workflowStatus
	appModel := s.appModel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.switching = false
		s.mu.Unlock()
	}()

	if req == (automate.SelectRequest{}) {
		if err := s.engine.ActivateModel(ctx, appModel); err != nil {
			return nil, invalid("Selected model did not become active; expected %s, got %s", displayModel(appModel), err.Error())
		}
		s.mu.Lock()
		s.pin = nil
		s.mu.Unlock()
		s.log.Info("model unpinned")
		return s.selectResponse(ctx)
	}

	ready, models, err := s.catalog(ctx)
	if err != nil {
		return nil, err
	}
	if !ready {
		return nil, invalid("The model catalog is still loading; select again when catalog.status is ready")
	}
	m, err := matchModel(models, req)
	if err != nil {
		return nil, err
	}
	if !automate.WorkflowReady(status) {
		return nil, invalid("Cannot switch models while workflow status is %s", status)
	}
	if err := s.engine.ActivateModel(ctx, m.Name); err != nil {
		return nil, invalid("Selected model did not become active; expected %s, got %s", m.Name, err.Error())
	}
	if got := s.engine.Runtime().ModelName; got != m.Name {
		return nil, invalid("Selected model did not become active; expected %s, got %s", m.Name, displayModel(got))
	}
	s.mu.Lock()
	s.pin = &m
	s.mu.Unlock()
	s.log.Info("model pinned", "model", m.Name)
	return s.selectResponse(ctx)
}

func displayModel(name string) string {
	if name == "" {
		return "unknown"
	}
	return name
}

func (s *Server) selectResponse(ctx context.Context) (*automate.SelectResponse, error) {
	_, models, err := s.catalog(ctx)
	if err != nil {
		return nil, err
	}
	resp := &automate.SelectResponse{Models: models}
	for i := range models {
		if models[i].Selected {
			m := models[i]
			resp.Selected = &m
			break
		}
	}
	return resp, nil
}

// applyLaunchSelection applies --model/--family/--size once the catalog is
// ready, as the application's own selection; a failure is reported in
// /health as launchModelSelectionError.
func (s *Server) applyLaunchSelection(ls LaunchSelection) {
	ctx, cancel := context.WithTimeout(s.baseCtx, 10*time.Minute)
	defer cancel()
	fail := func(msg string) {
		s.mu.Lock()
		s.launchErr = &msg
		s.mu.Unlock()
		s.log.Warn("launch model selection not applied", "reason", msg)
	}
	for {
		cat, err := s.engine.Catalog(ctx)
		if err != nil {
			fail(err.Error())
			return
		}
		if cat.Ready {
			m, err := matchModel(cat.Models, automate.SelectRequest{ModelName: ls.ModelName, Family: ls.Family, SizeCode: ls.SizeCode})
			if err != nil {
				fail(err.Error())
				return
			}
			// Switch only while holding the slot, like Select: never under
			// a run, never racing a client's select.
			s.mu.Lock()
			if s.closed {
				s.mu.Unlock()
				return
			}
			if s.active == nil && s.model == nil && !s.switching {
				s.switching = true
				pinned := s.pin != nil
				s.appModel = m.Name
				s.mu.Unlock()
				err := error(nil)
				if !pinned { // a client's pin wins; unpinning returns to this
					err = s.engine.ActivateModel(ctx, m.Name)
				}
				s.mu.Lock()
				s.switching = false
				s.mu.Unlock()
				if err != nil {
					fail(err.Error())
					return
				}
				s.log.Info("launch model selection applied", "model", m.Name, "pinned_meanwhile", pinned)
				return
			}
			s.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			fail("the model catalog did not become ready")
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}
