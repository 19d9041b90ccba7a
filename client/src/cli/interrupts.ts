/**
 * Ctrl-C as the commands see it. A press nobody claimed aborts `signal`, which ends the
 * command (docs/cli.md); a command may claim the next press instead, as `relay chat` does
 * while a run streams, to cancel that run and go on (docs/cli.md, Chat). A claim serves one
 * press: the press after it ends the command again, so a second Ctrl-C always leaves.
 */
export class Interrupts {
  private readonly controller: AbortController;
  private claimed: (() => void) | null = null;

  constructor(controller = new AbortController()) {
    this.controller = controller;
  }

  /** Aborted by a press nobody claimed. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Ctrl-C was pressed (a SIGINT, or readline's Ctrl-C on a terminal). */
  press(): void {
    const handler = this.claimed;
    this.claimed = null;
    if (handler) handler();
    else this.controller.abort();
  }

  /**
   * Until the returned release is called, the next press calls `handler` instead of aborting
   * the signal. A later claim replaces an earlier one.
   */
  claim(handler: () => void): () => void {
    this.claimed = handler;
    return () => {
      if (this.claimed === handler) this.claimed = null;
    };
  }
}
