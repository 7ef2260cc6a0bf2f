package mockhub

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
)

// clientFrame is a masked WebSocket frame from a client (RFC 6455 5.2).
func clientFrame(first byte, payload []byte) []byte {
	key := []byte{0x12, 0x34, 0x56, 0x78}
	f := []byte{first}
	switch n := len(payload); {
	case n < 126:
		f = append(f, 0x80|byte(n))
	case n < 1<<16:
		f = append(f, 0x80|126)
		f = binary.BigEndian.AppendUint16(f, uint16(n))
	default:
		f = append(f, 0x80|127)
		f = binary.BigEndian.AppendUint64(f, uint64(n))
	}
	f = append(f, key...)
	masked := bytes.Clone(payload)
	mask(masked, key)
	return append(f, masked...)
}

// unframe reads the client frames of b back: their first bytes and
// unmasked payloads.
func unframe(t *testing.T, b []byte) (firsts []byte, payloads []string) {
	t.Helper()
	short := func(need int) {
		if len(b) < need {
			t.Fatalf("a frame is cut short: %d bytes left, %d needed (frames so far %q)", len(b), need, payloads)
		}
	}
	for len(b) > 0 {
		short(2)
		first, n := b[0], int(b[1]&0x7f)
		b = b[2:]
		switch n {
		case 126:
			short(2)
			n, b = int(binary.BigEndian.Uint16(b)), b[2:]
		case 127:
			short(8)
			n, b = int(binary.BigEndian.Uint64(b)&(1<<31-1)), b[8:]
		}
		short(4 + n)
		key := b[:4]
		p := bytes.Clone(b[4 : 4+n])
		mask(p, key)
		firsts, payloads = append(firsts, first), append(payloads, string(p))
		b = b[4+n:]
	}
	return firsts, payloads
}

// The filter replaces, in place, the completions of awaited invocations
// and nothing else, in frames of any length, whatever the reads' sizes,
// the bytes net/http read ahead included.
func TestResultConnTakesOutAwaitedCompletions(t *testing.T) {
	const rs = "\x1e"
	awaited := `{"type":3,"invocationId":"dup-1"}`
	other := `{"type":3,"invocationId":"7","result":{}}`
	invocation := `{"type":1,"invocationId":"dup-1","target":"VerifySelf","arguments":[]}`
	long := `{"type":1,"target":"Log","arguments":["` + strings.Repeat("x", 300) + `"]}`
	payloads := []string{
		invocation + rs + awaited + rs + other + rs,
		long + rs + awaited + rs,
		awaited + rs,
	}
	var stream []byte
	for _, p := range payloads {
		stream = append(stream, clientFrame(0x81, []byte(p))...)
	}
	binaryFrame := clientFrame(0x82, []byte(awaited+rs)) // not text: untouched
	stream = append(stream, binaryFrame...)
	fragment := clientFrame(0x01, []byte(awaited+rs)) // not final: untouched
	stream = append(stream, fragment...)

	for _, ahead := range []int{0, 1, 7, len(stream) / 2} {
		s, err := New(Config{})
		if err != nil {
			t.Fatal(err)
		}
		tr := &transport{deviceID: "d"}
		tr.awaitResult("dup-1")
		server, client := net.Pipe()
		go func() {
			for _, b := range stream[ahead:] { // one byte a write: reads see every cut
				client.Write([]byte{b})
			}
			client.Close()
		}()
		rc := newResultConn(s, tr, server, stream[:ahead])
		got, err := io.ReadAll(rc)
		if err != nil && err != io.EOF {
			t.Fatalf("ahead %d: %v", ahead, err)
		}
		firsts, gotPayloads := unframe(t, got)
		ping := func(rec string) string { return `{"type":6}` + strings.Repeat(" ", len(rec)-len(`{"type":6}`)) }
		want := []string{
			invocation + rs + ping(awaited) + rs + other + rs,
			long + rs + ping(awaited) + rs,
			ping(awaited) + rs,
			awaited + rs,
			awaited + rs,
		}
		if len(gotPayloads) != len(want) || !bytes.Equal(firsts, []byte{0x81, 0x81, 0x81, 0x82, 0x01}) {
			t.Fatalf("ahead %d: frames %x %q", ahead, firsts, gotPayloads)
		}
		for i := range want {
			if gotPayloads[i] != want[i] {
				t.Errorf("ahead %d, frame %d:\n got %q\nwant %q", ahead, i, gotPayloads[i], want[i])
			}
		}
		n := 0
		for _, e := range s.Events(0) {
			if e.Action == "result" && e.Args["invocationId"] == "dup-1" {
				n++
			}
		}
		if n != 3 {
			t.Errorf("ahead %d: %d result events, want 3", ahead, n)
		}
		s.Close()
	}
}
