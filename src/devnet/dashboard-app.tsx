/**
 * Mounts the devnet dashboard on a terminal and redraws it whenever its source says the view
 * changed. This module has no side effects at import, but it loads ink and React, so the
 * devnet command imports it lazily (`await import('./dashboard-app.js')`) and other commands
 * never pay for it.
 *
 * Signals belong to the caller. The dashboard is mounted with `exitOnCtrlC: false` and reads no
 * keys, so ink never puts stdin into raw mode and Ctrl-C reaches the process as an ordinary
 * SIGINT. The caller's SIGINT handler stops the devnet and calls `unmount()`; ink then leaves
 * the last frame on screen. (ink also watches exit signals through signal-exit, but that only
 * acts when no other SIGINT listener exists, so it cannot pre-empt the caller's handler.)
 */
import { useEffect, useState, type ReactNode } from 'react';
import { render } from 'ink';
import { Dashboard } from './dashboard.js';
import type { DevnetView } from './view.js';

/** Where the dashboard gets its snapshots: the observer, or a hand-built source in tests. */
export interface DashboardSource {
  /** The latest view; called after every notification. */
  current(): DevnetView;
  /** Registers a change listener and returns its unsubscribe function. */
  subscribe(fn: () => void): () => void;
}

/** A mounted dashboard. */
export interface DashboardHandle {
  /** Stops redrawing and leaves the last frame on screen; safe to call twice. */
  unmount(): void;
  /** Settles once the dashboard has been unmounted and its output flushed. */
  waitUntilExit(): Promise<void>;
}

/** Mounts the dashboard on `opts.stdout` (default process.stdout, which should be a TTY) and redraws it on every change the source reports. */
export function renderDashboard(source: DashboardSource, opts: { stdout?: NodeJS.WriteStream } = {}): DashboardHandle {
  let live = false;
  const app = <LiveDashboard source={source} onLive={(l) => (live = l)} />;
  const instance = render(app, { stdout: opts.stdout ?? process.stdout, exitOnCtrlC: false });
  return {
    unmount: () => {
      // React commits a state update on a microtask, so a view set just before a same-tick
      // unmount (say, "stopping" from the SIGINT handler) would miss the final frame; ink's
      // rerender flushes pending work synchronously first. Only while mounted: rerender after
      // an unmount (ours, or ink's own on a render error or exit) would mount the tree again.
      if (live) instance.rerender(app);
      instance.unmount();
    },
    waitUntilExit: async () => {
      await instance.waitUntilExit();
    },
  };
}

/** The dashboard of the source's latest view; `onLive` reports mounting and unmounting (both run synchronously in ink's legacy mode). */
function LiveDashboard({ source, onLive }: { source: DashboardSource; onLive: (live: boolean) => void }): ReactNode {
  // useState rather than useSyncExternalStore: the latter needs current() to return the same
  // object until something changes, and an observer that builds a fresh view per call would
  // then re-render forever.
  const [view, setView] = useState(() => source.current());
  useEffect(() => {
    const unsubscribe = source.subscribe(() => setView(source.current()));
    // A change between the first render and subscribing would otherwise go unseen until the next one.
    setView(source.current());
    onLive(true);
    return () => {
      onLive(false);
      unsubscribe();
    };
  }, [source, onLive]);
  return <Dashboard view={view} />;
}
