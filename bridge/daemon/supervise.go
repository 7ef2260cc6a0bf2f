package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"syscall"

	"github.com/hubgate/hubgate/hub"
)

// Supervise starts d and runs it until ctx ends, a signal other than
// SIGHUP arrives on sigs, or the bridge stops on its own; SIGHUP calls
// reload. The caller subscribes sigs (signal.Notify). A second stop
// signal during the stop terminates the current run; a third one returns
// without waiting any longer (the kernel drops the instance lock with the
// process; the next start removes the stale socket).
func Supervise(ctx context.Context, d *Daemon, sigs <-chan os.Signal, reload func(), log *slog.Logger) error {
	if err := d.Start(ctx); err != nil {
		return err
	}
	closed := make(chan error, 1)
	interrupts := 0
	stop := func() {
		interrupts++
		if interrupts == 1 {
			go func() { closed <- d.Close() }()
		}
	}
	ctxDone, bridgeDone := ctx.Done(), d.Done()
	for {
		select {
		case <-ctxDone:
			ctxDone = nil
			if interrupts == 0 {
				stop()
			}
		case <-bridgeDone:
			bridgeDone = nil
			if interrupts == 0 {
				stop()
			}
		case s := <-sigs:
			switch {
			case s == syscall.SIGHUP && interrupts == 0:
				reload()
			case s == syscall.SIGHUP:
				log.Info("SIGHUP ignored: the daemon is stopping")
			default:
				stop()
				switch interrupts {
				case 2:
					log.Warn("second interrupt: terminating the current run and stopping now")
					d.Force(context.Background())
				case 3:
					log.Warn("third interrupt: exiting without waiting for the stop to finish")
					return errors.New("stopped without waiting for a clean stop")
				}
			}
		case err := <-closed:
			return err
		}
	}
}

// WrongDevice is the error of a daemon whose hub stopped because
// VerifySelf answered another device than the paired one (a device token
// of another device), matching hub.ErrWrongDevice; nil otherwise. A
// supervisor must not see success.
func (d *Daemon) WrongDevice() error {
	h := d.Info().Hub
	if h == nil {
		return nil
	}
	if st := h.State(); st.Cause == hub.CauseWrongDevice {
		err := st.Err
		if err == nil || !errors.Is(err, hub.ErrWrongDevice) {
			err = fmt.Errorf("%w: %s", hub.ErrWrongDevice, st.Reason)
		}
		return fmt.Errorf("the daemon stopped: %w; the device token is not the paired device's: run 'hubgate pair --reuse' (or --replace) to pair again", err)
	}
	return nil
}

// ReportReload reports what a SIGHUP's reload of file did, in the log and
// on the event stream (bridge.EventReloaded): the changes it applied
// (Reload's lines) and the settings that changed but apply only after a
// restart; or, with refused set, that the file was refused and the
// running configuration stays (bridge.EventReloadRefused). The log line
// comes first, so that a reader of the event finds it written.
func (d *Daemon) ReportReload(file string, changed, restart []string, refused error) {
	log := d.log
	switch {
	case refused != nil:
		log.Error("SIGHUP: the configuration was refused; the running one stays", "file", file, "err", refused)
	case len(changed) == 0 && len(restart) == 0:
		log.Info("SIGHUP: configuration reloaded; nothing changed", "file", file)
	case len(changed) == 0:
		log.Info("SIGHUP: configuration reloaded; nothing to apply now", "file", file)
	default:
		log.Info("SIGHUP: configuration reloaded: "+strings.Join(changed, "; "), "file", file, "changes", len(changed))
	}
	if refused == nil && len(restart) > 0 {
		log.Warn("SIGHUP: these settings changed but apply only after a restart: "+strings.Join(restart, "; "), "file", file)
	}
	if b := d.Info().Bridge; b != nil {
		b.Reloaded(changed, restart, refused)
	}
}
