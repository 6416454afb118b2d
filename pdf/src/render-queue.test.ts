import { describe, expect, it } from 'vitest';
import { BoundedQueue, QueueFullError } from './render-queue';

/** A task that runs until the test settles it. */
function gate(): { task: () => Promise<string>; open: (value: string) => void; started: boolean } {
  let open: (value: string) => void = () => {};
  const done = new Promise<string>((resolve) => {
    open = resolve;
  });
  const g = {
    started: false,
    open: (value: string) => open(value),
    task: () => {
      g.started = true;
      return done;
    },
  };
  return g;
}

describe('BoundedQueue', () => {
  it('runs `concurrency` tasks, queues `maxWaiting`, refuses the rest at once', async () => {
    const q = new BoundedQueue(2, 1);
    const [a, b, c] = [gate(), gate(), gate()];
    const ra = q.run(a.task);
    const rb = q.run(b.task);
    const rc = q.run(c.task);
    expect([a.started, b.started, c.started]).toEqual([true, true, false]);
    expect([q.running, q.waiting]).toEqual([2, 1]);
    await expect(q.run(gate().task)).rejects.toBeInstanceOf(QueueFullError);
    a.open('a');
    expect(await ra).toBe('a');
    expect(c.started).toBe(true);
    expect([q.running, q.waiting]).toEqual([2, 0]);
    b.open('b');
    c.open('c');
    expect(await Promise.all([rb, rc])).toEqual(['b', 'c']);
    expect([q.running, q.waiting]).toEqual([0, 0]);
  });

  it('frees a waiting slot when its signal aborts; the task never runs', async () => {
    const q = new BoundedQueue(1, 1);
    const running = gate();
    const waiting = gate();
    const r1 = q.run(running.task);
    const controller = new AbortController();
    const r2 = q.run(waiting.task, controller.signal);
    await expect(q.run(gate().task)).rejects.toBeInstanceOf(QueueFullError);
    const reason = new Error('client left');
    controller.abort(reason);
    await expect(r2).rejects.toBe(reason);
    expect(q.waiting).toBe(0);
    const next = gate();
    const r3 = q.run(next.task);
    running.open('1');
    await r1;
    next.open('3');
    expect(await r3).toBe('3');
    expect(waiting.started).toBe(false);
  });

  it('hands the signal to a running task, and frees the slot when the task settles', async () => {
    const q = new BoundedQueue(1, 0);
    const controller = new AbortController();
    const seen: (AbortSignal | undefined)[] = [];
    const r = q.run(
      (signal) =>
        new Promise<void>((_, reject) => {
          seen.push(signal);
          signal?.addEventListener('abort', () => reject(signal.reason));
        }),
      controller.signal,
    );
    expect(seen).toEqual([controller.signal]);
    controller.abort(new Error('gone'));
    await expect(r).rejects.toThrow('gone');
    expect(q.running).toBe(0);
  });

  it('counts a task that throws synchronously as finished', async () => {
    const q = new BoundedQueue(1, 0);
    await expect(
      q.run(() => {
        throw new Error('sync');
      }),
    ).rejects.toThrow('sync');
    expect(q.running).toBe(0);
  });

  it('tells listeners about every change', async () => {
    const q = new BoundedQueue(1, 1);
    const states: string[] = [];
    const off = q.onChange(() => states.push(`${q.running}/${q.waiting}`));
    const a = gate();
    const b = gate();
    const ra = q.run(a.task);
    const rb = q.run(b.task);
    a.open('a');
    b.open('b');
    await Promise.all([ra, rb]);
    off();
    // a starts; b waits; a ends and b starts (b's start, then a's end are reported); b ends.
    expect(states).toEqual(['1/0', '1/1', '1/0', '1/0', '0/0']);
  });
});
