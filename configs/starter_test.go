package configs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// WriteStarter creates the folder and the file, refuses to replace one
// without force (leaving it untouched), and with force keeps it as .bak.
func TestWriteStarter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hubgate", "config.yaml")
	if err := WriteStarter(path, false); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, StarterYAML()) {
		t.Fatalf("starter file: %v", err)
	}
	if err := os.WriteFile(path, []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteStarter(path, false); !errors.Is(err, ErrConfigExists) {
		t.Fatalf("over an existing file: %v, want ErrConfigExists", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "mine\n" {
		t.Fatalf("the existing file changed: %q", b)
	}
	if err := WriteStarter(path, true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path + ".bak"); string(b) != "mine\n" {
		t.Errorf("the .bak: %q", b)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, StarterYAML()) {
		t.Errorf("--force did not write the starter file")
	}
}
