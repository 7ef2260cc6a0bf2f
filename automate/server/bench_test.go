package server_test

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/hubgate/hubgate/automate/scripted"
	"github.com/hubgate/hubgate/automate/server"
)

// benchServer serves the real server with the scripted engine on loopback.
func benchServer(b *testing.B) *httptest.Server {
	srv, err := server.New(server.Config{Key: testKey, Assistant: scripted.New(scripted.Config{Logger: slog.New(slog.DiscardHandler)}),
		Workspace: b.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	b.Cleanup(ts.Close)
	return ts
}

// bareServer is the baseline: a chi router whose one handler writes a
// health-sized JSON body, behind the same constant-time bearer check.
func bareServer(b *testing.B) *httptest.Server {
	want := sha256.Sum256([]byte("Bearer " + testKey))
	body := bytes.Repeat([]byte("x"), 700) // about the size of a health body
	r := chi.NewRouter()
	r.Get("/health", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(append(append([]byte(`{"status":"ok","pad":"`), body...), `"}`...))
	})
	auth := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		got := sha256.Sum256([]byte(req.Header.Get("Authorization")))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.WriteHeader(401)
			return
		}
		r.ServeHTTP(w, req)
	})
	ts := httptest.NewServer(auth)
	b.Cleanup(ts.Close)
	return ts
}

func benchGet(b *testing.B, url string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		req, _ := http.NewRequest("GET", url+"/health", nil)
		req.Header.Set("Authorization", "Bearer "+testKey)
		for pb.Next() {
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
}

// BenchmarkHealth compares GET /health on the real server with the bare
// chi handler behind the same auth, in one run: compare their req/s.
func BenchmarkHealth(b *testing.B) {
	b.Run("server", func(b *testing.B) { benchGet(b, benchServer(b).URL) })
	b.Run("bare-chi", func(b *testing.B) { benchGet(b, bareServer(b).URL) })
}

// BenchmarkInstantRun measures the round trip of a scripted run with no
// directives (POST /v1/runs to record) from one client, as the bridge
// sends them, and reports its percentiles.
func BenchmarkInstantRun(b *testing.B) {
	for _, c := range []struct {
		name, body string
	}{
		{"full-record", `{"prompt":"say hi"}`},
		{"no-blocks", `{"prompt":"say hi","include":{"steps":false,"trace":false,"events":false}}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			ts := benchServer(b)
			client := &http.Client{}
			durations := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				req, _ := http.NewRequest("POST", ts.URL+"/v1/runs", bytes.NewReader([]byte(c.body)))
				req.Header.Set("Authorization", "Bearer "+testKey)
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				durations = append(durations, time.Since(start))
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
			b.StopTimer()
			slices.Sort(durations)
			pct := func(p float64) float64 {
				return float64(durations[int(p*float64(len(durations)-1))].Microseconds())
			}
			b.ReportMetric(pct(0.50), "p50-µs")
			b.ReportMetric(pct(0.99), "p99-µs")
		})
	}
}
