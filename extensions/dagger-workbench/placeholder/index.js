// PLACEHOLDER (issue 12): the real extension (daggers panel, promote, new dagger, job
// details) replaces this folder. It exists so the wheel's build hook
// (hatch-jupyter-builder: `jlpm install && jlpm build:prod` here, output in
// workbench/labextension) runs end to end before that extension lands.
module.exports = {
  id: '@dagger-workbench/lab:placeholder',
  description: 'Placeholder: does nothing.',
  autoStart: true,
  activate: () => {}
};
