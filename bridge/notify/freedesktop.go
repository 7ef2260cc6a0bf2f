//go:build !darwin && !windows

package notify

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/godbus/dbus/v5"
)

// The freedesktop notification service (Desktop Notifications
// Specification 1.2).
const (
	notificationsName  = "org.freedesktop.Notifications"
	notificationsPath  = dbus.ObjectPath("/org/freedesktop/Notifications")
	notificationsIface = "org.freedesktop.Notifications"
)

// Freedesktop sends notifications to org.freedesktop.Notifications on the
// D-Bus session bus. It keeps one private connection, made on first use
// and made again after an error. Its zero value uses the session bus
// (SessionBusAddress); it never starts a bus of its own.
type Freedesktop struct {
	// Address is the bus address. Zero: SessionBusAddress().
	Address string

	mu     sync.Mutex
	conn   *dbus.Conn
	owner  string // the unique name of the server last asked (capabilities.go)
	markup bool   // that server announced body-markup
}

// DefaultDesktop is the platform's notification backend.
func DefaultDesktop() Desktop { return &Freedesktop{} }

// Notify calls org.freedesktop.Notifications.Notify.
func (f *Freedesktop) Notify(ctx context.Context, m Message) error {
	_, err := f.NotifyReplacing(ctx, m, 0)
	return err
}

// NotifyReplacing calls org.freedesktop.Notifications.Notify with
// replaces_id: the server updates that notification in place (or shows a
// new one when it is gone) and returns the id shown.
func (f *Freedesktop) NotifyReplacing(ctx context.Context, m Message, replaces uint32) (uint32, error) {
	conn, err := f.connect(ctx)
	if err != nil {
		return 0, err
	}
	owner, markup, err := f.server(ctx, conn)
	if err != nil {
		var de dbus.Error
		if !errors.As(err, &de) {
			f.drop(conn)
		}
		return 0, err
	}
	// The summary carries the command text from the hub: never trusted.
	summary, body := m.Summary, m.Body
	if markup {
		summary, body = html.EscapeString(summary), html.EscapeString(body)
	}
	obj := conn.Object(owner, notificationsPath)
	hints := map[string]dbus.Variant{"urgency": dbus.MakeVariant(byte(m.Urgency))}
	var id uint32
	err = obj.CallWithContext(ctx, notificationsIface+".Notify", 0,
		AppName, replaces, "", summary, body, []string{}, hints, int32(-1)).Store(&id)
	if err != nil {
		var de dbus.Error
		if !errors.As(err, &de) {
			f.drop(conn) // the connection itself failed
		}
		return 0, fmt.Errorf("org.freedesktop.Notifications: %w", err)
	}
	return id, nil
}

// connect returns the connection, making it within ctx.
func (f *Freedesktop) connect(ctx context.Context) (*dbus.Conn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conn != nil && f.conn.Connected() {
		return f.conn, nil
	}
	type result struct {
		conn *dbus.Conn
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		var (
			c   *dbus.Conn
			err error
		)
		addr := f.Address
		if addr == "" {
			addr, err = SessionBusAddress()
		}
		if err == nil {
			// dbus.Connect dials the address only (godbus has no
			// autolaunch transport); dbus.ConnectSessionBus would
			// run dbus-launch when no bus is known.
			c, err = dbus.Connect(addr)
		}
		ch <- result{c, err}
	}()
	var r result
	select {
	case r = <-ch:
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.conn != nil {
				r.conn.Close()
			}
		}()
		return nil, fmt.Errorf("connect to the session bus: %w", ctx.Err())
	}
	if r.err != nil {
		return nil, fmt.Errorf("connect to the session bus: %w", r.err)
	}
	f.conn, f.owner = r.conn, "" // a new bus, maybe: ask the server again
	return f.conn, nil
}

// ErrNoSessionBus: no session bus address is known.
var ErrNoSessionBus = errors.New("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS names none and $XDG_RUNTIME_DIR/bus does not exist)")

// SessionBusAddress returns the address of the running session bus:
// DBUS_SESSION_BUS_ADDRESS, else unix:path=$XDG_RUNTIME_DIR/bus when that
// socket exists ($XDG_RUNTIME_DIR unset: /run/user/<uid>, where godbus
// looks too), else ErrNoSessionBus.
//
// It never autolaunches a bus, as godbus's ConnectSessionBus does (it runs
// dbus-launch): that child would bypass internal/proc (the daemon's whole
// environment, secrets included) and, with dbus-x11 installed, leave a new
// dbus-daemon behind at every retry. Nor does it set
// DBUS_SESSION_BUS_ADDRESS in the process environment, as godbus does.
func SessionBusAddress() (string, error) {
	if a := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" && a != "autolaunch:" {
		return a, nil
	}
	dir := os.Getenv("XDG_RUNTIME_DIR")
	if dir == "" {
		dir = filepath.Join("/run/user", strconv.Itoa(os.Getuid()))
	}
	bus := filepath.Join(dir, "bus")
	if fi, err := os.Stat(bus); err == nil && fi.Mode().Type() == fs.ModeSocket {
		return "unix:path=" + dbus.EscapeBusAddressValue(bus), nil
	}
	return "", ErrNoSessionBus
}

func (f *Freedesktop) drop(c *dbus.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conn == c {
		f.conn.Close()
		f.conn = nil
	}
}

// Close closes the connection.
func (f *Freedesktop) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conn == nil {
		return nil
	}
	err := f.conn.Close()
	f.conn = nil
	return err
}
