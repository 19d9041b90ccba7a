/**
 * How long each kind of wait in a run lasts. One place, so the watchdog, the pauses and the
 * callers that wait for a run agree.
 */

/** How long a request waits for its run before answering with the run still running (202). */
export const RUN_WAIT_MS = 25_000;
/** Escalations wait this long for a person before the agent is told nobody answered. */
export const ESCALATION_TIMEOUT_MS = 24 * 3_600_000;
/** How long a run in requires_action waits for the client's tool outputs (OpenAI's runs wait 10 minutes too). */
export const TOOL_OUTPUTS_TIMEOUT_MS = 10 * 60_000;
/** The watchdog: a running run's resume timer, pushed on while its loop makes progress. */
export const WATCHDOG_MS = 120_000;
