/** The extension's command ids: plugins reach each other's features through them. */
export const CommandIDs = {
  showPanel: 'dagger-workbench:show-panel',
  refresh: 'dagger-workbench:refresh',
  reveal: 'dagger-workbench:reveal',
  openLogs: 'dagger-workbench:open-logs',
  openHealth: 'dagger-workbench:open-health',
  openNotebook: 'dagger-workbench:open-notebook',
  openDetails: 'dagger-workbench:open-details',
  promote: 'dagger-workbench:promote',
  newDagger: 'dagger-workbench:new-dagger',
  newDaggerHere: 'dagger-workbench:new-dagger-here'
} as const;

/** The plugin ids (`schema/NAME.json` holds each one's settings). */
export const PluginIDs = {
  daggers: '@dagger-workbench/lab:daggers',
  promote: '@dagger-workbench/lab:promote',
  newDagger: '@dagger-workbench/lab:new-dagger',
  details: '@dagger-workbench/lab:details'
} as const;

/** The kernel spec that runs daggers (`workbench kernel install`). */
export const WORKBENCH_KERNEL = 'dagger-workbench';

/** Arguments naming a job in commands. */
export interface JobArgs {
  id: number;
  name: string;
  version?: number;
}

export function jobArgs(args: any): JobArgs {
  return {
    id: Number(args.id),
    name: String(args.name ?? args.id),
    version: args.version === undefined ? undefined : Number(args.version)
  };
}
