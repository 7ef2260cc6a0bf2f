package mcpclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"
)

// fakeStdio is a scripted MCP server on the other ends of a Stdio's pipes.
type fakeStdio struct {
	got   chan wireMsg // every message the client sent
	out   chan string  // lines to write to the client, in order
	outW  *io.PipeWriter
	reply func(f *fakeStdio, m wireMsg)
}

// startFakeStdio returns a transport whose server answers initialize with
// version and passes every other message to reply (nil: no answer).
func startFakeStdio(t *testing.T, version string, reply func(f *fakeStdio, m wireMsg)) (*Stdio, *fakeStdio) {
	cr, sw := io.Pipe() // server -> client
	sr, cw := io.Pipe() // client -> server
	f := &fakeStdio{got: make(chan wireMsg, 100), out: make(chan string, 100), outW: sw, reply: reply}
	go func() { // the writer keeps order without blocking the reader
		for line := range f.out {
			if _, err := sw.Write([]byte(line + "\n")); err != nil {
				return
			}
		}
		sw.Close()
	}()
	go func() {
		defer close(f.out)
		sc := bufio.NewScanner(sr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m wireMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("the client sent a line that is not JSON: %q", sc.Text())
				continue
			}
			f.got <- m
			if m.Method == "initialize" {
				f.out <- `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"` + version + `","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`
				continue
			}
			if f.reply != nil {
				f.reply(f, m)
			}
		}
	}()
	return &Stdio{Stdin: cw, Stdout: cr}, f
}

// next returns the next message the client sent that is not
// initialization.
func (f *fakeStdio) next(t *testing.T) wireMsg {
	t.Helper()
	for {
		var m wireMsg
		select {
		case m = <-f.got:
		default:
			synctest.Wait()
			select {
			case m = <-f.got:
			default:
				t.Fatal("the client sent nothing more")
			}
		}
		if m.Method != "initialize" && m.Method != "notifications/initialized" {
			return m
		}
	}
}

func result(m wireMsg, res string) string {
	return `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + res + `}`
}

func TestStdioHandshakeAndPagination(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, f := startFakeStdio(t, "2025-03-26", func(f *fakeStdio, m wireMsg) {
			if m.Method != "tools/list" {
				return
			}
			var p struct{ Cursor string }
			json.Unmarshal(m.Params, &p)
			switch p.Cursor {
			case "":
				f.out <- result(m, `{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b"}],"nextCursor":"page2"}`)
			case "page2":
				f.out <- result(m, `{"tools":[{"name":"c","description":"the third"}]}`)
			}
		})
		s, err := Connect(context.Background(), tr, Options{ClientName: "test-client", ClientVersion: "1.2"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		init := <-f.got
		var ip struct {
			ProtocolVersion string
			Capabilities    map[string]any
			ClientInfo      implementation
		}
		json.Unmarshal(init.Params, &ip)
		if init.Method != "initialize" || ip.ProtocolVersion != ProtocolVersion || ip.Capabilities == nil || len(ip.Capabilities) != 0 || ip.ClientInfo != (implementation{"test-client", "1.2"}) {
			t.Fatalf("initialize: %s %s", init.Method, init.Params)
		}
		if m := <-f.got; m.Method != "notifications/initialized" || len(m.ID) != 0 {
			t.Fatalf("after initialize: %+v", m)
		}
		if got := s.Server(); got.ProtocolVersion != "2025-03-26" || got.Name != "fake" {
			t.Fatalf("server info %+v", got)
		}
		tools, err := s.ListTools(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range tools {
			names = append(names, tl.Name)
		}
		if strings.Join(names, ",") != "a,b,c" || tools[2].Description != "the third" || string(tools[0].InputSchema) != `{"type":"object"}` {
			t.Fatalf("tools %+v", tools)
		}
		if m := f.next(t); m.Method != "tools/list" || string(m.Params) != `{}` {
			t.Fatalf("first page asked with %s", m.Params)
		}
		if m := f.next(t); string(m.Params) != `{"cursor":"page2"}` {
			t.Fatalf("second page asked with %s", m.Params)
		}
	})
}

func TestStdioRefusesAnUnsupportedVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, f := startFakeStdio(t, "2099-01-01", nil)
		_, err := Connect(context.Background(), tr, Options{})
		if !errors.Is(err, ErrUnsupportedVersion) || !strings.Contains(err.Error(), "2099-01-01") {
			t.Fatalf("%v", err)
		}
		synctest.Wait()
		for len(f.got) > 0 {
			if m := <-f.got; m.Method == "notifications/initialized" {
				t.Fatal("initialized was sent after a refused version")
			}
		}
	})
}

func TestStdioAnswersServerRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, f := startFakeStdio(t, "2025-06-18", nil)
		s, err := Connect(context.Background(), tr, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		f.out <- `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`
		f.out <- `{"jsonrpc":"2.0","id":"r1","method":"sampling/createMessage","params":{}}`
		f.out <- `{"jsonrpc":"2.0","id":7,"method":"ping"}`
		answers := map[string]wireMsg{}
		for range 2 {
			m := f.next(t)
			answers[string(m.ID)] = m
		}
		if a := answers[`"r1"`]; a.Error == nil || a.Error.Code != -32601 || a.Method != "" {
			t.Fatalf("sampling answered %+v", a)
		}
		if a := answers["7"]; a.Error != nil || string(a.Result) != "{}" {
			t.Fatalf("ping answered %+v", a)
		}
		if s.Err() != nil {
			t.Fatalf("the session broke: %v", s.Err())
		}
	})
}

func TestStdioCancelledCallSendsCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, f := startFakeStdio(t, "2025-06-18", nil) // never answers a call
		s, err := Connect(context.Background(), tr, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := s.CallTool(ctx, "slow", map[string]any{"n": 1})
			done <- err
		}()
		call := f.next(t)
		if call.Method != "tools/call" || string(call.Params) != `{"name":"slow","arguments":{"n":1}}` {
			t.Fatalf("call %+v", call)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled call: %v", err)
		}
		c := f.next(t)
		var p struct {
			RequestID json.RawMessage
			Reason    string
		}
		json.Unmarshal(c.Params, &p)
		if c.Method != "notifications/cancelled" || len(c.ID) != 0 || string(p.RequestID) != string(call.ID) || p.Reason == "" {
			t.Fatalf("cancel notification %+v", c)
		}
	})
}

func TestStdioServerClosingFailsPendingCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, _ := startFakeStdio(t, "2025-06-18", func(f *fakeStdio, m wireMsg) {
			if m.Method == "tools/call" {
				f.outW.Close() // the server goes away mid-call
			}
		})
		s, err := Connect(context.Background(), tr, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		_, err = s.CallTool(context.Background(), "x", nil)
		if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "closed its stdout") {
			t.Fatalf("%v", err)
		}
		if _, err := s.ListTools(context.Background()); !errors.Is(err, ErrClosed) {
			t.Fatalf("a later call: %v", err)
		}
	})
}

func TestStdioOversizeMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, _ := startFakeStdio(t, "2025-06-18", func(f *fakeStdio, m wireMsg) {
			if m.Method == "tools/list" {
				f.out <- result(m, `{"tools":[{"name":"`+strings.Repeat("x", 2000)+`"}]}`)
			}
		})
		s, err := Connect(context.Background(), tr, Options{MaxMessageSize: 1024})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		_, err = s.ListTools(context.Background())
		if !errors.Is(err, ErrMessageTooLarge) || !strings.Contains(err.Error(), "1024") {
			t.Fatalf("%v", err)
		}
	})
}

func TestStdioCallResultAndRPCError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, _ := startFakeStdio(t, "2025-06-18", func(f *fakeStdio, m wireMsg) {
			var p struct{ Name string }
			json.Unmarshal(m.Params, &p)
			switch p.Name {
			case "ok":
				f.out <- result(m, `{"content":[{"type":"text","text":"hi"},{"type":"resource","resource":{"uri":"file:///a","text":"body"}}],"structuredContent":{"k":1},"isError":true}`)
			case "bad":
				f.out <- `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32602,"message":"unknown tool"}}`
			}
		})
		s, err := Connect(context.Background(), tr, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		res, err := s.CallTool(context.Background(), "ok", nil)
		if err != nil || !res.IsError || len(res.Content) != 2 || res.Content[0].Text != "hi" || res.Content[1].Resource.Text != "body" || string(res.StructuredContent) != `{"k":1}` {
			t.Fatalf("%+v %v", res, err)
		}
		_, err = s.CallTool(context.Background(), "bad", nil)
		var rpc *RPCError
		if !errors.As(err, &rpc) || rpc.Code != -32602 {
			t.Fatalf("%v", err)
		}
	})
}
