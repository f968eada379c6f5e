import type { CgroupRef } from '@scienceevolve/supervisor/cgroup';

/**
 * What the service runtime tells about the processes it starts, so that someone other than the host can
 * collect them if the host dies (SPEC §6). The supervisor client implements it; a runtime with no
 * registry still collects its own processes on stop, but nothing covers a host crash.
 * @public
 */
export interface ProcessRegistry {
  /**
   * Announces a marker the host is about to put into a service's environment. Resolves once the
   * supervisor acknowledged it, so that a host killed between spawn and register is still covered
   * by the marker sweep. With `cgroup`, the service's control group (created, still empty): collected and
   * removed with the marker if the host dies.
   */
  intent(marker: string, cgroup?: CgroupRef): Promise<void>;
  /** A process group was started (`pgid` = the leader's pid) for `marker`. */
  register(pgid: number, marker: string): void;
  /** The host collected the group itself; the supervisor forgets it. */
  release(pgid: number): void;
  /** The host will use `marker` no more (every group of it was collected). */
  releaseMarker?(marker: string): void;
}
