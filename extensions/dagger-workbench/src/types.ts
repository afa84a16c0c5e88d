/** The job service's JSON, as its README's "The job service over HTTP" lists it. */

export interface Metrics {
  input_rate: number | null;
  processed_rate: number | null;
  batch_duration_ms: number | null;
  watermark: string | null;
  offsets_behind_latest: number | null;
  late: number | null;
  dead_letters: number | null;
  records: number | null;
  batches: number | null;
  last_batch_at: string | null;
  last_sink_write_at: string | null;
}

export interface Job {
  id: number;
  name: string;
  team: string;
  status: string;
  desired: string;
  version: number;
  cluster: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
  failures: number;
  run: { id: string; pid: number | null; started_at: string | null } | null;
  metrics: Partial<Metrics>;
  last_error: string | null;
  alerts_firing: number;
  /** the current version's pinned schema version (null: the bundled schemas) */
  schema_version?: number | null;
}

/** One micro-batch of a run (`progress.jsonl`). */
export interface Progress {
  batch: number;
  time: number;
  input_rows: number;
  input_rate: number;
  processed_rate: number;
  duration_ms: number;
  offsets_behind?: number | null;
}

export interface Me {
  user: string;
  teams: string[];
  admin: boolean;
}

export interface Version {
  number: number;
  author: string;
  created_at: string;
  spec_hash: string;
  spec_yaml?: string;
  notebook_sha256: string | null;
  parity: any;
  current: boolean;
  note: string;
  schema_version?: number | null;
  [key: string]: unknown;
}

export interface WorkbenchEvent {
  time?: string;
  at?: string;
  user?: string;
  actor?: string;
  action: string;
  detail?: any;
  [key: string]: unknown;
}

export interface Alert {
  fingerprint?: string;
  job?: string;
  team?: string;
  rule: string;
  labels: Record<string, string>;
  status: string;
  starts_at?: string;
  time?: string;
  values?: Record<string, unknown>;
  silenced_by?: number | null;
}

/** A promotion the Jupyter server runs (`POST promotions`). */
export interface Promotion {
  id: string;
  state: 'running' | 'done' | 'failed';
  steps: { name: string; text: string; time: number }[];
  error: { type: string; message: string } | null;
  diff: string | null;
  job: Job | null;
  schema_version?: number | null;
}

/** A published schema version (`GET schemas/versions`). */
export interface SchemaVersion {
  number: number;
  sha256: string;
  created_at: string;
  author: string;
  note: string;
  source: string;
  breaking: string[];
  messages: string[];
}

/** A named Spark cluster (`GET clusters`): those the caller's teams may use. */
export interface SparkCluster {
  name: string;
  master: string;
  teams: string[] | null;
  jobs_per_app: number;
  resources: Record<string, unknown>;
  standby: string | null;
  unreachable_after_s: number;
  description: string;
  conf: Record<string, string>;
  /** whether the master accepts connections now; null: not probed (`local[N]`, `yarn`) */
  answering: boolean | null;
  /** the caller's jobs on it */
  jobs: number;
}

/** A named Kafka cluster (`GET kafka-clusters`). */
export interface KafkaCluster {
  name: string;
  bootstrap_servers: string;
  security: Record<string, string>;
  standby: string | null;
  failover_after_s: number;
  description: string;
}

/** Whether a Kafka cluster answers now (`GET kafka-clusters/NAME`). */
export interface KafkaProbe extends KafkaCluster {
  reachable: boolean;
  cluster_id: string | null;
  brokers: number;
  error: string | null;
  jobs: { job: string; team: string; tables: string[] }[];
}
