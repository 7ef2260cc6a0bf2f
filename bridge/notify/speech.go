package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Speech defaults.
const (
	// DefaultMaxSpoken is how many characters of an answer are spoken.
	DefaultMaxSpoken = 400
	// DefaultMaxSpeech bounds one utterance.
	DefaultMaxSpeech = 5 * time.Minute
	// MoreInHistory ends an answer cut for speech.
	MoreInHistory = "And more in history."
)

// ErrNoSpeechCommand: no speech command is configured and none of the
// platform's is installed.
var ErrNoSpeechCommand = errors.New("no speech command found (install espeak-ng or speech-dispatcher, or set bridge.speech.command)")

// SpeakerOptions configures NewSpeaker.
type SpeakerOptions struct {
	// Command is the speech command's argv; an element equal to TextArg
	// ("{text}") is replaced by the text, otherwise the text goes to its
	// stdin. Zero: the platform's: espeak-ng (stdin), else spd-say -w on
	// Linux; say -f - on macOS; SAPI through PowerShell on Windows.
	Command []string
	// MaxChars is how many characters of an answer are spoken. Zero:
	// DefaultMaxSpoken.
	MaxChars int
	// MaxDuration bounds one utterance. Zero: DefaultMaxSpeech.
	MaxDuration time.Duration
	// LookPath finds a program. Zero: exec.LookPath.
	LookPath func(string) (string, error)
	Logger   *slog.Logger // Zero: slog.Default()
}

// Speaker speaks answers, one at a time: Say cuts off what is being said.
type Speaker struct {
	opts SpeakerOptions
	log  *slog.Logger

	mu     sync.Mutex
	cur    *child
	closed bool
}

// sapiScript speaks stdin with the Windows speech API.
const sapiScript = `Add-Type -AssemblyName System.Speech; $s = New-Object System.Speech.Synthesis.SpeechSynthesizer; $s.Speak([Console]::In.ReadToEnd())`

// DefaultSpeechCommand is the platform's speech command, or nil when none
// is installed.
func DefaultSpeechCommand(lookPath func(string) (string, error)) []string {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	switch runtime.GOOS {
	case "darwin":
		return []string{"say", "-f", "-"}
	case "windows":
		return []string{"powershell.exe", "-NoProfile", "-NonInteractive", "-Command", sapiScript}
	}
	if p, err := lookPath("espeak-ng"); err == nil {
		return []string{p}
	}
	if p, err := lookPath("spd-say"); err == nil {
		// -w waits until the text is spoken, so that a cut-off can end it.
		return []string{p, "-w", "--", TextArg}
	}
	return nil
}

// NewSpeaker returns a speaker, or ErrNoSpeechCommand.
func NewSpeaker(opts SpeakerOptions) (*Speaker, error) {
	if len(opts.Command) == 0 {
		opts.Command = DefaultSpeechCommand(opts.LookPath)
		if opts.Command == nil {
			return nil, ErrNoSpeechCommand
		}
	}
	if opts.MaxChars <= 0 {
		opts.MaxChars = DefaultMaxSpoken
	}
	if opts.MaxDuration <= 0 {
		opts.MaxDuration = DefaultMaxSpeech
	}
	s := &Speaker{opts: opts, log: opts.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s, nil
}

// Say cuts off what is being said and starts saying text (cut to
// MaxChars). It returns once the speech command started; done is closed
// when it ends (for tests and callers that wait).
func (s *Speaker) Say(text string) (done <-chan struct{}, err error) {
	text = SpokenText(text, s.opts.MaxChars)
	if text == "" {
		return nil, errors.New("nothing to say")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("the speaker is closed")
	}
	if s.cur != nil {
		s.cur.kill()
		s.cur = nil
	}
	c, err := startChild(s.opts.Command, text)
	if err != nil {
		return nil, fmt.Errorf("speech: %w", err)
	}
	s.cur = c
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.MaxDuration)
	go func() {
		defer cancel()
		if err := c.wait(ctx); err != nil && !errors.Is(err, context.Canceled) {
			s.log.Debug("speech ended", "err", err)
		}
		s.mu.Lock()
		if s.cur == c {
			s.cur = nil
		}
		s.mu.Unlock()
	}()
	return c.done, nil
}

// Done returns a channel closed when what is being said ends (at once when
// nothing is): for a caller of Service.Handle, which gets no channel of
// its own, to wait for the speech it started.
func (s *Speaker) Done() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return closedChan
	}
	return s.cur.done
}

var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// Stop cuts off what is being said, if anything.
func (s *Speaker) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil {
		s.cur.kill()
		s.cur = nil
	}
}

// Close stops speaking; Say fails afterwards.
func (s *Speaker) Close() {
	s.Stop()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// SpokenText is text as it is spoken: blanks collapsed, and when longer
// than maxChars, cut at the last sentence end (or else word boundary)
// within it, followed by MoreInHistory.
func SpokenText(text string, maxChars int) string {
	text = strings.Join(strings.Fields(text), " ")
	r := []rune(text)
	if maxChars <= 0 || len(r) <= maxChars {
		return text
	}
	cut := string(r[:maxChars])
	if i := lastSentenceEnd(cut); i > len(cut)/2 {
		cut = cut[:i]
	} else if i := strings.LastIndexFunc(cut, unicode.IsSpace); i > 0 {
		cut = strings.TrimRightFunc(cut[:i], func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) }) + "."
	}
	return cut + " " + MoreInHistory
}

// lastSentenceEnd is the index just after the last ".", "!" or "?" that
// ends a sentence in s (followed by a blank), or -1.
func lastSentenceEnd(s string) int {
	for i := len(s) - 2; i >= 0; i-- {
		if strings.ContainsRune(".!?", rune(s[i])) && s[i+1] == ' ' {
			return i + 1
		}
	}
	return -1
}
