package configs

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// blockingStore blocks a check right after its canary is stored: it
// prints the canary's name and waits to be killed.
type blockingStore struct{ SecretStore }

func (b blockingStore) Get(ctx context.Context, account string) (string, error) {
	if strings.HasPrefix(account, CanaryAccountPrefix) {
		fmt.Printf("stored %s\n", account)
		select {}
	}
	return b.SecretStore.Get(ctx, account)
}

// TestCanaryCheckChild is the process the kill -9 test kills mid-check;
// it does nothing unless started by that test.
func TestCanaryCheckChild(t *testing.T) {
	svc := os.Getenv("HUBGATE_CANARY_CHILD_SERVICE")
	if svc == "" {
		t.Skip("started by TestKeyringIntegrationCanaryAfterKill only")
	}
	_ = CheckStore(context.Background(), blockingStore{NewKeyring(KeyringOptions{Service: svc, Timeout: integrationTimeout})})
	t.Fatal("the check was not held")
}

// A check killed with SIGKILL after storing its canary leaves it in the
// real keyring; the next check removes it, and never the canary of a
// check still running in another process.
func TestKeyringIntegrationCanaryAfterKill(t *testing.T) {
	requireKeyringHarness(t)
	svc := "hubgate-canarytest-" + randomHex(4)
	k := NewKeyring(KeyringOptions{Service: svc, Timeout: integrationTimeout})
	t.Cleanup(func() {
		if out, _ := secretTool(t, "search", "--all", "service", svc); strings.Contains(out, "hubgate-") {
			t.Errorf("left in the keyring:\n%s", out)
		}
	})
	// start runs a check in another process, held once its canary is
	// stored; it returns the process and the canary's name.
	start := func() (*exec.Cmd, string) {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestCanaryCheckChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "HUBGATE_CANARY_CHILD_SERVICE="+svc)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		line, err := bufio.NewReader(out).ReadString('\n')
		name, ok := strings.CutPrefix(strings.TrimSpace(line), "stored ")
		if err != nil || !ok {
			t.Fatalf("the child check said %q, %v", line, err)
		}
		return cmd, name
	}
	has := func(name string) bool {
		t.Helper()
		_, err := k.Get(context.Background(), name)
		return err == nil
	}

	killed, killedName := start()
	live, liveName := start()
	if err := killed.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	killed.Wait()
	if !has(killedName) || !has(liveName) {
		t.Fatalf("the canaries were not stored: %v %v", has(killedName), has(liveName))
	}
	if err := k.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if has(killedName) {
		t.Error("the killed check's canary stayed after the next check")
	}
	if !has(liveName) {
		t.Error("the next check removed the canary of a check still running")
	}
	live.Process.Kill()
	live.Wait()
	if err := k.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if has(liveName) {
		t.Error("the canary of the second check, killed too, stayed after a check")
	}
	if _, err := k.Get(context.Background(), CanaryRegisterAccount); err == nil {
		t.Error("the register stayed with nothing in it")
	}
}
