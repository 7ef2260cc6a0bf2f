package mockhubtest_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubgate/hubgate/hub/mockhub"
	"github.com/hubgate/hubgate/hub/mockhub/mockhubtest"
	"github.com/hubgate/hubgate/internal/testutil"
)

func TestStartServesTheMockUntilTheTestEnds(t *testing.T) {
	var url string
	var seen atomic.Int32
	var arrived testutil.Signal // each request the mock is given
	pollDone := make(chan error, 1)
	t.Run("test", func(t *testing.T) {
		m := mockhubtest.Start(t, mockhubtest.Options{
			Config: mockhub.Config{DeviceTypeID: "pad-type"},
			Wrap: func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					seen.Add(1)
					arrived.Notify()
					next.ServeHTTP(w, r)
				})
			},
		})
		url = m.URL
		if m.Config().DeviceTypeID != "pad-type" {
			t.Errorf("the mock's config: %+v", m.Config())
		}
		resp, err := http.Post(m.URL+"/mock/devices", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated || len(m.Devices()) != 1 || seen.Load() != 1 {
			t.Fatalf("create a device: %d, %d devices, %d requests seen by Wrap", resp.StatusCode, len(m.Devices()), seen.Load())
		}
		// A long poll the test leaves open must not hold its cleanup.
		go func() {
			resp, err := http.Get(m.URL + "/mock/events?since=1000&wait=1m")
			if err == nil {
				resp.Body.Close()
			}
			pollDone <- err
		}()
		testutil.Until(t, "the long poll to reach the mock", arrived.C(), func() bool { return seen.Load() == 2 })
	})
	// The cleanup cut it (had it waited, the poll would have been
	// answered, a minute later).
	select {
	case err := <-pollDone:
		if err == nil {
			t.Error("the long poll was answered, not cut, by the test's cleanup")
		}
	case <-time.After(testutil.DefaultTimeout):
		t.Fatal("the long poll outlived the test's cleanup")
	}
	if resp, err := http.Get(url + "/mock/devices"); err == nil {
		resp.Body.Close()
		t.Errorf("the mock still answers at %s after the test: %d", url, resp.StatusCode)
	}
}
