// Package loopbackpeer owns one question: which user holds the other end
// of a TCP connection made on this machine. The kernel knows: on Linux,
// every socket records the user that made it, and the peer's socket is
// the one whose local address is the connection's remote one. UID asks
// through sock_diag netlink (NETLINK_SOCK_DIAG, an exact 4-tuple lookup:
// a few microseconds) and falls back to scanning /proc/net/tcp and
// /proc/net/tcp6 when netlink is not available.
//
// Only a socket still held open by a process counts: a closed one
// (orphaned, in TIME_WAIT) reports no user, and a listening one is not a
// connection's end; both answer ErrNotFound, so that a caller refuses
// rather than guesses.
//
// Guard is the one HTTP check built on it: a request passes only from a
// socket of the process's own user, asked once per connection. The status
// page and the mock's admin API (console and journal included) use it.
//
// Other systems: Supported is false and UID answers errors.ErrUnsupported;
// a Guard there checks nothing (Checks is false).
package loopbackpeer

import "errors"

// ErrNotFound: no open socket holds the other end of the connection (it
// closed meanwhile, or the connection did not come from this machine).
var ErrNotFound = errors.New("loopbackpeer: no open socket holds the other end of the connection")
