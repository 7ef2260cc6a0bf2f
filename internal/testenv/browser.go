package testenv

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// RunBrowserScript runs a playwright-core script of testdata/npm with node
// against the system chromium (given to it as CHROMIUM, with env added to
// the test's environment), under the protocol the project's browser tests
// share, one line each on the script's stdout: "READY" (ready, when not
// nil, is called: the test acts on the page's behalf), "RESULT <json>"
// (decoded into result), "FAIL <message>" (fails the test); other lines
// are logged. It fails the test when the script fails or gives no result,
// and skips it when node, chromium or playwright-core is missing (fails
// under CI=true).
func RunBrowserScript(t testing.TB, script string, env []string, ready func(), result any) {
	t.Helper()
	node := RequireNode(t)
	chromium := RequireProgram(t, "chromium")
	NpmBin(t, "playwright-core/package.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(ModuleRoot(t), NpmDir, script))
	cmd.Env = append(append(os.Environ(), "CHROMIUM="+chromium), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	got := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "READY" && ready != nil:
			ready()
		case strings.HasPrefix(line, "RESULT "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "RESULT ")), result); err != nil {
				t.Fatalf("%s: a bad RESULT line: %v", script, err)
			}
			got = true
		case strings.HasPrefix(line, "FAIL "):
			t.Errorf("the browser script failed: %s", line)
		default:
			t.Logf("%s: %s", script, line)
		}
	}
	if err := cmd.Wait(); err != nil || !got {
		t.Fatalf("the browser script %s: %v; stderr:\n%s", script, err, stderr.String())
	}
}
