// The adapter to the LiveKit Agents framework: the one place that reaches past the public API of
// @livekit/agents and its avatar plugins, for what the installed versions offer no public way to
// do. Everything else in agent/ uses their public API only (`defineAgent`, `AgentServer`,
// `ServerOptions`, `JobContext`, `voice.*`, the plugins' exports). Each function says what it
// works around and which test shows it; test/agent/agents-adapter.test.ts pins the versions
// below, so an upgrade starts here, and fails naming this file until it was reviewed.
//
//   worker.ts        the worker's side: registration, accepted jobs, warm processes, an early
//                    "available", the environment its job processes are forked with
//   job.ts           the job process's side: the worker's shutdown request, the forked environment
//   session-host.ts  the AgentSession's remote-session host, closed
//   avatars.ts       the hosted avatars' API call, without an AgentSession
//   captions.ts      the caption synchronizer's clock, started when the visitor hears a reply
//   speech.ts        the session's speech in progress (which order said a transcript turn), and
//                    each tool output as its call completes (the offline answer written ahead)
//
// The patch (agent/patches/@livekit%2Fagents@1.9.0.patch, applied by `bun install`) changes
// agents' compiled ESM files, the build this service loads (the CommonJS copy is never loaded and
// is left as it is). Each hunk is marked "Likeness patch (Pn)" there; why it exists, and the test
// that fails without it:
//
// P1 dist/audio.js: AudioByteStream.write joins and slices with plain copies. agents spread both
//    arrays byte by byte and copied the rest after every frame: a few percent of a core per live
//    microphone (every STT stream writes each frame through it), and quadratic in what one write
//    holds. Test: test/agent/audio-byte-stream.test.ts (a long write).
// P2 dist/ipc/job_proc_executor.js: a job process is forked without the variables named in
//    LIKENESS_JOB_ENV_EXCLUDE (the control plane's secrets; jobs run third-party plugins and
//    models). agents forks with this process's whole environment and has no option for another,
//    and scrubbing it in the child would leave it in /proc/<pid>/environ. worker.ts sets the
//    names. Test: test/agent/job-environment.test.ts (job processes).
// P3 dist/ipc/inference_proc_executor.js: the same for agents' inference process (the
//    end-of-turn model). Test: test/agent/job-environment.test.ts (the inference process).
// P4 dist/ipc/proc_pool.js: `numIdleProcesses` counts the processes running jobs too, so warm
//    processes fill only the slots running jobs leave free. agents keeps that many idle beside
//    the running ones: a worker whose every slot took a job forked as many spares, which loaded
//    their models beside the starting sessions on the same CPU. Tests:
//    test/agent/agents-adapter.test.ts (no spare beside a running job),
//    test/agent/worker-runs-sessions.test.ts, test/avatar/burst.test.ts.
// P5 dist/worker.js: `launchingJobs`, the jobs accepted and not running yet (waiting for their
//    assignment or a process). The heartbeats list them, or the control plane would send a
//    waiting session to a second agent, and a full worker refuses more. `JobRequest.accept()`
//    returns before the job runs, so nothing public tells when it stops waiting, or that it
//    never will (an assignment that never came). Test: test/agent/agents-adapter.test.ts.
// P6 dist/worker.js: `warmProcesses`, the job processes initialised and waiting for a job (the
//    pool is private): readiness (/readyz), the metrics, and when replacements may load their
//    models behind the face. Tests: test/agent/agents-adapter.test.ts, test/avatar/burst.test.ts.
// P7 dist/job.js: `JobContext.connect` takes `dynacast` (agents fixes it at false), so LiveKit
//    pauses the face's video encoder while nobody subscribes to it (agent/job.ts): a job whose
//    visitor is not watching spends half the CPU. Test: test/avatar/dynacast.test.ts.
// P8 dist/ipc/job_proc_lazy_main.js: agents' event-loop monitor (a 20 ms timer and a watchdog
//    thread, ~11 ms of CPU a second) starts with the process's job, not once the process is
//    warm: a worker's warm processes wait for jobs most of their life (3.5 % of a core for an
//    idle `npm start`'s three). Test: test/agent/agents-adapter.test.ts (the warm process has no
//    monitor thread, the running one has).
// P9 dist/voice/room_io/_input.js: the visitor's microphone is read in 20 ms frames, as a
//    browser sends them. rtc-node's default hands over 10 ms frames: twice the FFI events, each
//    decoded and passed through the VAD, the STT and the session's streams (a listening job's
//    main thread 7.0 → 4.6–5.3 % of a core, bench/renderer). Test:
//    test/agent/room-input-frames.test.ts.
//
// The second patch (agent/patches/@livekit%2Frtc-node@0.13.35.patch) changes rtc-node, which
// agents, the job and the tests' visitors share:
//
// R1 dist/ffi_client.cjs: the FFI is started without capturing its logs, so its records stay in
//    Rust (env_logger: errors on stderr, more with RUST_LOG). rtc-node asked for every record,
//    trace level included, decoded each batch and handed it to every listener, and nothing in it
//    reads them: ~17 records per chunk of a data stream, a quarter of the receiving job's CPU for
//    a visitor's big stream (test/conversation/visitor-reach.test.ts: 69 → 59 s alone). Test:
//    test/agent/rtc-node-logs.test.ts.
//
// Reached past the types: agents' inference runner registry and a job's inference executor
// (inference.ts; exported at run time, typed @internal), for SmolLM2's sentence reading.
//
// Workarounds at run time, without a patch: the worker's shutdown request read off agents' IPC
// (job.ts), the `worker_msg` channel (worker.ts: announceAvailable), the session host
// (session-host.ts), the plugins' private call (avatars.ts), the caption synchronizer's clock
// (captions.ts), the speech in progress (speech.ts).

export { startBeyAgent, startLemonSliceAgent } from './avatars.ts';
export { HEARD_AFTER_PLAYED_MS, syncCaptionsToPlayback } from './captions.ts';
export { type InferenceRunner, registerInferenceRunner, runInference } from './inference.ts';
export { listenToWorker, modelsInBackground, onStopRequested, prewarmDone, stoppedByWorker } from './job.ts';
export { closeRemoteSessionHost } from './session-host.ts';
export { currentSpeech, onToolOutput } from './speech.ts';
export {
  announceAvailable,
  launchingJobs,
  setJobProcessEnvironment,
  warmProcesses,
  whenRegistered,
} from './worker.ts';

/** The @livekit/rtc-node version its patch (R1 above) was written for. */
export const RTC_NODE_VERSION = '0.13.35';

/** The @livekit/agents version this adapter (and the patch) was checked against. */
export const AGENTS_VERSION = '1.9.0';

/** The plugins whose private members avatars.ts reaches, at the versions it was checked against. */
export const PLUGIN_VERSIONS: Readonly<Record<string, string>> = {
  '@livekit/agents-plugin-bey': '1.4.2',
  '@livekit/agents-plugin-lemonslice': '1.9.0',
};
