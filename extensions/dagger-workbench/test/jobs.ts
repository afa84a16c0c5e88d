import { Job } from '../src/types';

/** A job as the service lists it, with what a test changes in `over`. */
export function job(over: Partial<Job> = {}): Job {
  return {
    id: 1,
    name: 'surge',
    team: 'pricing',
    status: 'RUNNING',
    desired: 'RUNNING',
    version: 1,
    cluster: null,
    created_by: 'alice',
    created_at: '',
    updated_at: '',
    failures: 0,
    run: { id: 'r1', pid: 1, started_at: null },
    metrics: {},
    last_error: null,
    alerts_firing: 0,
    ...over
  };
}
