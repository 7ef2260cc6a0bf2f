//go:build !darwin && !windows

package notify

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/godbus/dbus/v5"
)

// The notification server can change while the daemon runs (a desktop
// session starts later, dunst replaces a fallback server, a server
// restarts), and with it whether it reads the body as markup. So every
// Notify asks the bus daemon who owns org.freedesktop.Notifications now (a
// round trip to the bus daemon only), reads the capabilities again only
// when the owner changed (a unique name is never reused on a bus), and
// sends the notification to that unique name: the markup decision is made
// for the very server that receives the text.

// server returns the unique bus name of the notification server that owns
// org.freedesktop.Notifications now, and whether it reads markup. With no
// owner, the bus starts an activatable server, as a call to the name would.
func (f *Freedesktop) server(ctx context.Context, conn *dbus.Conn) (owner string, markup bool, err error) {
	owner, err = nameOwner(ctx, conn)
	if isNoOwner(err) {
		var reply uint32
		if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.StartServiceByName", 0, notificationsName, uint32(0)).Store(&reply); err != nil {
			return "", false, fmt.Errorf("org.freedesktop.Notifications: %w", err)
		}
		owner, err = nameOwner(ctx, conn)
	}
	if err != nil {
		return "", false, fmt.Errorf("org.freedesktop.Notifications: %w", err)
	}
	f.mu.Lock()
	if f.owner == owner {
		markup = f.markup
		f.mu.Unlock()
		return owner, markup, nil
	}
	f.mu.Unlock()
	var caps []string
	if err := conn.Object(owner, notificationsPath).CallWithContext(ctx, notificationsIface+".GetCapabilities", 0).Store(&caps); err != nil {
		return "", false, fmt.Errorf("org.freedesktop.Notifications: %w", err)
	}
	markup = slices.Contains(caps, "body-markup")
	f.mu.Lock()
	f.owner, f.markup = owner, markup
	f.mu.Unlock()
	return owner, markup, nil
}

func nameOwner(ctx context.Context, conn *dbus.Conn) (string, error) {
	var owner string
	err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetNameOwner", 0, notificationsName).Store(&owner)
	return owner, err
}

func isNoOwner(err error) bool {
	var de dbus.Error
	return errors.As(err, &de) && de.Name == "org.freedesktop.DBus.Error.NameHasNoOwner"
}
