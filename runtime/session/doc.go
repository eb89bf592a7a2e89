// Package session owns the babysitter session loop's state: which run an
// agent session (harness, session id) drives, how many stop-hook
// iterations it has had, and the stop-hook decision that keeps the agent
// working until the run completes.
package session
