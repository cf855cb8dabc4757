// A module listed in PIPELINE_MODULES by mistake: its default export is no pipeline.
export default { name: 'acme', render: () => null };
