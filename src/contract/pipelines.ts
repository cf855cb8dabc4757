// Avatar pipelines are named by id on identities (docs/api.md#pipelines). Each id has two
// halves: training in the control plane (src/pipelines/<id>) and rendering in the agent
// (agent/pipelines/<id>).

/** The built-in CPU talking head: the default pipeline, and what older dispatches without an id mean. */
export const BUILTIN_PIPELINE_ID = 'builtin';
/** LemonSlice's hosted avatar, offered when LEMONSLICE_API_KEY is set. */
export const LEMONSLICE_PIPELINE_ID = 'lemonslice';
/** Anam's hosted avatar, offered when ANAM_API_KEY is set: a one-shot avatar made from the photo, or one the identity names. */
export const ANAM_PIPELINE_ID = 'anam';
/** Beyond Presence's hosted avatar, offered when BEY_API_KEY is set: the identity names one of the account's Bey avatars. */
export const BEY_PIPELINE_ID = 'bey';
