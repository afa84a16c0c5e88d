/**
 * The job service's REST API under `{baseUrl}workbench/api/`, called through Jupyter's
 * ServerConnection (its token, cookie and XSRF header). Errors are `ServiceError`s: the
 * service's `{"error": {status, type, message}}`, or `unreachable` when no answer came.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import {
  Alert,
  Job,
  KafkaCluster,
  KafkaProbe,
  Me,
  Progress,
  Promotion,
  SchemaVersion,
  SparkCluster,
  Version,
  WorkbenchEvent
} from './types';

/** The API's path under the server's base URL. */
export const API_PATH = 'workbench/api';

export class ServiceError extends Error {
  constructor(
    readonly status: number,
    readonly kind: string,
    message: string
  ) {
    super(message);
    this.name = 'ServiceError';
  }

  /** No answer from the server (down, network), or a gateway's error page. */
  get unreachable(): boolean {
    return this.status === 0 || this.status === 502 || this.status === 503 || this.status === 504;
  }
}

/** The error a response carries: the service's JSON error, else its status line. */
export async function errorOf(response: Response): Promise<ServiceError> {
  let body: any = null;
  try {
    body = await response.json();
  } catch {
    // not JSON: a proxy's page or Jupyter's own HTML error
  }
  const error = body?.error;
  if (error && typeof error.message === 'string') {
    return new ServiceError(response.status, error.type ?? 'Error', error.message);
  }
  const message = body?.message ?? body?.reason ?? response.statusText ?? 'no message';
  return new ServiceError(response.status, 'HTTPError', `${response.status}: ${message}`);
}

/** A client of the job service for one Jupyter server. */
export class WorkbenchAPI {
  constructor(readonly settings: ServerConnection.ISettings = ServerConnection.makeSettings()) {}

  /** The URL of `path` under the API (`jobs/x/logs`), query items added. */
  url(path: string, query: Record<string, string | number | undefined> = {}): string {
    const url = URLExt.join(this.settings.baseUrl, API_PATH, path);
    const items = Object.entries(query).filter(([, v]) => v !== undefined && v !== '');
    return items.length
      ? `${url}?${URLExt.objectToQueryString(Object.fromEntries(items) as any).slice(1)}`
      : url;
  }

  /** A page of the service outside the API (`workbench/jobs/JOB/health`). */
  pageUrl(path: string): string {
    return URLExt.join(this.settings.baseUrl, 'workbench', path);
  }

  async request<T>(
    path: string,
    init: RequestInit = {},
    query: Record<string, string | number | undefined> = {}
  ): Promise<T> {
    let response: Response;
    try {
      response = await ServerConnection.makeRequest(this.url(path, query), init, this.settings);
    } catch (err) {
      throw new ServiceError(0, 'Unreachable', `the Jupyter server did not answer: ${err}`);
    }
    if (!response.ok) {
      throw await errorOf(response);
    }
    const type = response.headers.get('Content-Type') ?? '';
    return (type.includes('json') ? await response.json() : await response.text()) as T;
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.request<T>(path, {
      method: 'POST',
      body: body === undefined ? undefined : JSON.stringify(body)
    });
  }

  me(): Promise<Me> {
    return this.request<Me>('me');
  }

  /** The published schema versions, oldest first (`GET schemas/versions`). */
  async schemaVersions(): Promise<SchemaVersion[]> {
    return (await this.request<{ versions: SchemaVersion[] }>('schemas/versions')).versions;
  }

  async jobs(team?: string): Promise<Job[]> {
    return (await this.request<{ jobs: Job[] }>('jobs', {}, { team })).jobs;
  }

  job(ref: string | number): Promise<Job> {
    return this.request<Job>(`jobs/${encodeURIComponent(String(ref))}`);
  }

  act(ref: string | number, action: 'stop' | 'start' | 'restart'): Promise<Job> {
    return this.post<Job>(`jobs/${encodeURIComponent(String(ref))}/${action}`);
  }

  rollback(ref: string | number, version: number): Promise<Job> {
    return this.post<Job>(`jobs/${encodeURIComponent(String(ref))}/rollback`, { version });
  }

  async progress(ref: string | number, last = 30): Promise<Progress[]> {
    const path = `jobs/${encodeURIComponent(String(ref))}/progress`;
    return (await this.request<{ progress: Progress[] }>(path, {}, { last })).progress;
  }

  async versions(ref: string | number): Promise<Version[]> {
    const path = `jobs/${encodeURIComponent(String(ref))}/versions`;
    return (await this.request<{ versions: Version[] }>(path)).versions;
  }

  /** A version's executed notebook (nbformat JSON). */
  notebook(ref: string | number, version: number): Promise<any> {
    return this.request<any>(`jobs/${encodeURIComponent(String(ref))}/versions/${version}/notebook`);
  }

  async events(ref: string | number, last = 100): Promise<WorkbenchEvent[]> {
    const path = `jobs/${encodeURIComponent(String(ref))}/events`;
    return (await this.request<{ events: WorkbenchEvent[] }>(path, {}, { last })).events;
  }

  async jobAlerts(ref: string | number, last = 100): Promise<Alert[]> {
    const path = `jobs/${encodeURIComponent(String(ref))}/alerts`;
    return (await this.request<{ alerts: Alert[] }>(path, {}, { last })).alerts;
  }

  async alerts(team?: string, firing = false): Promise<Alert[]> {
    const query = { team, firing: firing ? 1 : undefined };
    return (await this.request<{ alerts: Alert[] }>('alerts', {}, query)).alerts;
  }

  silence(
    rule: string,
    labels: Record<string, string>,
    duration: string,
    comment: string,
    team?: string
  ): Promise<any> {
    return this.post('silences', { rule, labels, for: duration, comment, team });
  }

  /** A run's log from byte `offset` (the latest run's by default; `limit` bytes at most). */
  logs(ref: string | number, offset: number, run?: string, limit?: number): Promise<LogChunk> {
    const path = `jobs/${encodeURIComponent(String(ref))}/logs`;
    return this.request<LogChunk>(path, {}, { offset, run, limit });
  }

  /** The Spark clusters the caller's teams may use (admins: all). */
  async clusters(): Promise<SparkCluster[]> {
    return (await this.request<{ clusters: SparkCluster[] }>('clusters')).clusters;
  }

  /** The job stops and starts again on Spark cluster `cluster`, from its checkpoint. */
  move(ref: string | number, cluster: string): Promise<Job> {
    return this.post<Job>(`jobs/${encodeURIComponent(String(ref))}/move`, { cluster });
  }

  async kafkaClusters(): Promise<KafkaCluster[]> {
    return (await this.request<{ kafka_clusters: KafkaCluster[] }>('kafka-clusters')).kafka_clusters;
  }

  /** A Kafka cluster and whether it answers now (the service asks it: up to a few seconds). */
  kafkaCluster(name: string): Promise<KafkaProbe> {
    return this.request<KafkaProbe>(`kafka-clusters/${encodeURIComponent(name)}`);
  }

  /** The job's streams move to Kafka cluster `kafkaCluster` (a mirror): a new version. */
  failover(ref: string | number, kafkaCluster: string, reason = ''): Promise<Job> {
    const body = reason ? { kafka_cluster: kafkaCluster, reason } : { kafka_cluster: kafkaCluster };
    return this.post<Job>(`jobs/${encodeURIComponent(String(ref))}/failover`, body);
  }

  promote(request: PromoteRequest): Promise<Promotion> {
    return this.post<Promotion>('promotions', request);
  }

  promotion(id: string): Promise<Promotion> {
    return this.request<Promotion>(`promotions/${encodeURIComponent(id)}`);
  }
}

export interface LogChunk {
  run: string | null;
  offset: number;
  next_offset: number;
  text: string;
  running: boolean;
}

export interface PromoteRequest {
  notebook: string;
  team: string;
  name?: string;
  cluster?: string;
  parameters?: Record<string, unknown>;
  /** the published schema version to pin (default: the latest) */
  schema_version?: number;
}

/** The "new dagger" notebook for `name` (`templates/new-dagger?name=`), nbformat JSON. */
export function newDaggerTemplate(api: WorkbenchAPI, name: string): Promise<any> {
  return api.request<any>('templates/new-dagger', {}, { name });
}
