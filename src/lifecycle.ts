// The lifecycle root: one ordered cleanup registry and one interrupt ladder for the whole process. Signals
// (SIGINT, SIGTERM, SIGHUP) and the TUI's keys (Ctrl-C, a confirmed `q`) climb the same ladder, whichever screen or
// front end is mounted, so "interrupt" means one thing everywhere:
//
//   rung 0  nothing asked yet
//   rung 1  aborting — the first interrupt (SIGINT, Ctrl-C): the running turn is aborted; the run winds down, its
//           own cleanup runs (an arm's patch harvest, the tree reset, pi's close) and the screen stays
//   rung 2  quitting — the first quit (SIGTERM, SIGHUP, `q` confirmed): abort as above, and whatever waits on the
//           user (a board waiting for `q`) stops waiting
//   rung 3  forcing — any second request: every child ends at once (SIGKILL to their process groups) while the run's
//           cleanup still runs; a hard exit 130 after a grace backs it up should that cleanup hang
//
// With nothing attached (a command still preparing, a printing command), any request ends the process at once.
//
// No React here: the TUI and the headless front end both use it.
import { EXIT } from './contract/exit.js';

export type Rung = 0 | 1 | 2 | 3;

/** What the ladder acts on: the run being shown (abort) and whatever waits on the user (quit). */
export interface InterruptTarget {
  /** Abort the running turn. Idempotent. */
  abort(): void;
  /** Stop waiting on the user (a screen's key loop); the run itself is aborted by `abort`. Idempotent. */
  quit?(): void;
  /** Told each time the ladder climbs (the headless front end prints a line, a screen sets its status). */
  onRung?(rung: Rung): void;
}

export interface LifecycleOptions {
  /** Ends every live child at once (the supervisor's synchronous kill). */
  killAllChildrenSync: () => void;
  /** The hard exit that backs up rung 3. */
  exit?: (code: number) => void;
  /** How long rung 3 lets the run's cleanup go on before the hard exit. */
  forceGraceMs?: number;
  onWarning?: (message: string) => void;
}

type Cleanup = { label: string; fn: () => void | Promise<void> };

export class Lifecycle {
  private readonly cleanups: Cleanup[] = [];
  private target: InterruptTarget | undefined;
  private rungValue: Rung = 0;
  private disposed = false;
  private uninstallSignals: (() => void) | undefined;

  constructor(private readonly opts: LifecycleOptions) {}

  get rung(): Rung {
    return this.rungValue;
  }

  /**
   * Register a cleanup. Cleanups run in reverse order of registration (the last acquired is released first) at
   * `dispose`. The returned function runs this one now (once) and drops it from the registry: a screen that ends
   * normally releases its own mount, and a throw on the way still leaves it to `dispose`.
   */
  defer(label: string, fn: () => void | Promise<void>): () => Promise<void> {
    const entry: Cleanup = { label, fn };
    this.cleanups.push(entry);
    return async () => {
      const at = this.cleanups.indexOf(entry);
      if (at === -1) return;
      this.cleanups.splice(at, 1);
      await this.runCleanup(entry);
    };
  }

  /** The run (and screen) the ladder acts on from now on; the ladder starts again at rung 0. */
  attach(target: InterruptTarget): () => void {
    this.target = target;
    this.rungValue = 0;
    return () => {
      if (this.target === target) this.target = undefined;
    };
  }

  /** SIGINT, Ctrl-C: abort first; any second request forces. */
  interrupt(): void {
    this.climb(this.rungValue === 0 ? 1 : 3);
  }

  /** SIGTERM, SIGHUP, a confirmed `q`: abort and stop waiting; any second request forces. */
  quit(): void {
    this.climb(this.rungValue === 0 ? 2 : 3);
  }

  private climb(to: Rung): void {
    if (!this.target) {
      // Nothing runs or waits yet (a command still preparing, a probe, a print): nothing to wind down, so the
      // interrupt means what it means to any command line program — stop now, children first.
      this.opts.killAllChildrenSync();
      (this.opts.exit ?? process.exit)(EXIT.interrupted);
      return;
    }
    if (to <= this.rungValue && to !== 3) return;
    const from = this.rungValue;
    this.rungValue = to;
    const target = this.target;
    target?.onRung?.(to); // first: the line saying what happens comes before what it announces
    target?.abort();
    if (to >= 2) target?.quit?.();
    if (to === 3 && from !== 3) {
      this.opts.killAllChildrenSync();
      const timer = setTimeout(
        () => (this.opts.exit ?? process.exit)(EXIT.interrupted),
        this.opts.forceGraceMs ?? 10_000,
      );
      timer.unref();
    }
  }

  /**
   * SIGINT → interrupt, SIGTERM/SIGHUP → quit, and the last resort on 'exit' (no child outlives the cockpit).
   * Installed once for the process; removed by `dispose`.
   */
  installSignals(): void {
    if (this.uninstallSignals) return;
    const onInt = () => this.interrupt();
    const onTerm = () => this.quit();
    const onExit = () => this.opts.killAllChildrenSync();
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    process.on('SIGHUP', onTerm);
    process.on('exit', onExit);
    this.uninstallSignals = () => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      process.off('SIGHUP', onTerm);
      process.off('exit', onExit);
    };
  }

  /** Every cleanup still registered, last first; each one runs even when an earlier one fails. Idempotent. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    while (this.cleanups.length > 0) await this.runCleanup(this.cleanups.pop()!);
    this.uninstallSignals?.();
    this.uninstallSignals = undefined;
    this.target = undefined;
  }

  private async runCleanup(entry: Cleanup): Promise<void> {
    try {
      await entry.fn();
    } catch (error) {
      this.opts.onWarning?.(
        `cleanup "${entry.label}" failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}
