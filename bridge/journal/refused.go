package journal

import "context"

// RunRefused records that a run's POST was answered 409: the server's slot
// was held by a run hubgate did not start, so no run exists. The command
// has no run attached again (its decision back to received), so that the
// bridge can queue or drop it with SetDecision.
func (j *Journal) RunRefused(ctx context.Context, id int64, note string) error {
	return j.update(ctx, "run refused", id, `run = 'running' AND request_id = ''`,
		`run = '', task_id = '', run_started_at = 0, decision = 'received', note = ?`, note)
}
