package childenv

import (
	"slices"
	"testing"
)

func TestScrubDropsHubgateSecretsOnly(t *testing.T) {
	in := []string{"HUBGATE_CLIENT_SECRET=s", "hubgate_device_token=t", "HUBGATE_AUTOMATE_KEY=k", "HUBGATE_KEYRING_PASSWORD=p",
		"HUBGATE_API_URL=https://x", "OTHER_TOKEN=o", "PATH=/bin", "HUBGATE_BROKEN"}
	got := Scrub(in)
	want := []string{"HUBGATE_API_URL=https://x", "OTHER_TOKEN=o", "PATH=/bin", "HUBGATE_BROKEN"}
	if !slices.Equal(got, want) {
		t.Fatalf("Scrub = %q, want %q", got, want)
	}
	if in[0] != "HUBGATE_CLIENT_SECRET=s" {
		t.Error("Scrub modified its input")
	}
}
