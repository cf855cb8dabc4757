// Generated from the Likeness service's /openapi.json by openapi-typescript
// (npm run client:generate). Do not edit: regenerate.
export interface paths {
    "/v1/credits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The caller's balance and its ledger, newest first, paged */
        get: operations["getCredits"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Set the balance below which the `credits.low` webhook event is sent */
        patch: operations["updateCreditSettings"];
        trace?: never;
    };
    "/v1/documents": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the caller's documents, newest first */
        get: operations["listDocuments"];
        put?: never;
        /**
         * Upload a document for avatars to answer from; it is processed in the background
         * @description Answers 202 with the document `processing`; it becomes `ready` (a `document.ready` webhook) or `failed` with a `detail` saying what to change (`document.failed`). Attach it to an identity (`document_ids`) or a session start for its agent to answer from it.
         */
        post: operations["uploadDocument"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/documents/{document_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read one document and its processing status */
        get: operations["getDocument"];
        put?: never;
        post?: never;
        /**
         * Delete a document and its passages
         * @description It leaves every identity it was attached to, and running sessions stop retrieving from it from their next turn.
         */
        delete: operations["deleteDocument"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/embed/sessions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Start a session from a website's page with a publishable key
         * @description For browsers: the key (`lk_pub_…`) in `Authorization: Bearer` or `X-API-Key`, the page's `Origin` one of the key's `allowed_origins`, `identity_id` one of its `identity_ids`; the key's limits per key and per visitor address (an IPv6 visitor counted by their /64, `LIMIT_IPV6_PREFIX`) answer 429 with Retry-After. Answered with CORS for that origin, refusals included. The session is charged to the key's account and carries `publishable_key_id`; it ends when the visitor leaves or at its maximum length.
         */
        post: operations["startEmbedSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/identities": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the caller's identities, newest first */
        get: operations["listIdentities"];
        put?: never;
        /**
         * Create an identity; training runs within the call
         * @description Send `audio` to clone a voice, or `voice_id` for a preset (GET /v1/voices); neither gives the default English-only voice. `tool_ids` and `document_ids` (each one JSON array) name the tools and documents its agent uses. The photo must show a face large enough to animate: 422 `image.no_face` or `image.face_too_small` otherwise (several faces: the largest is used). 502 when the voice provider fails; nothing is kept or charged then.
         */
        post: operations["createIdentity"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/identities/{identity_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read one identity */
        get: operations["getIdentity"];
        put?: never;
        post?: never;
        /** Delete an identity and its stored face and voice */
        delete: operations["deleteIdentity"];
        options?: never;
        head?: never;
        /**
         * Update an identity
         * @description Text fields, `voice_id`, `tool_ids` and `document_ids` alone answer 200 (each list sent replaces the whole list; `[]` clears it). Image or audio uploads (with `prompt`) start a retrain: 202, then poll the status; a new image without a usable face is refused at once (422, as on create). `voice_id` switches to a preset voice and drops the uploaded sample; new `audio` is cloned into a new voice by the retrain.
         */
        patch: operations["updateIdentity"];
        trace?: never;
    };
    "/v1/identities/{identity_id}/status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** An identity's training status */
        get: operations["getIdentityStatus"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/pipelines": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the pipelines
         * @description A pipeline decides how an identity is trained and which renderer serves it, for the identity’s whole life.
         */
        get: operations["listPipelines"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/publishable-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the caller's publishable keys, newest first */
        get: operations["listPublishableKeys"];
        put?: never;
        /**
         * Make a key a website may publish: it starts sessions of some identities, from some origins
         * @description The key starts sessions only at POST /v1/embed/sessions, from pages of `allowed_origins`, of `identity_ids`, within its `limits`; it reads nothing. Its sessions are charged to this account and carry `publishable_key_id`.
         */
        post: operations["createPublishableKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/publishable-keys/{publishable_key_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read one publishable key */
        get: operations["getPublishableKey"];
        put?: never;
        post?: never;
        /** Revoke a publishable key: its next start is refused; sessions it started run on */
        delete: operations["revokePublishableKey"];
        options?: never;
        head?: never;
        /** Change a publishable key's name, origins, identities or limits; the next start uses them */
        patch: operations["updatePublishableKey"];
        trace?: never;
    };
    "/v1/recording-storage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The account's recording settings, without the secret */
        get: operations["getRecordingStorage"];
        /**
         * Set the account's recording settings: its own S3-compatible bucket (checked before it is saved) and its retention
         * @description The bucket is checked by writing a small object under the prefix and deleting it; a failure answers 422 with the step and the bucket server's error, and nothing is saved. The secret is kept encrypted and never returned. Recordings joined from then on go to `{prefix}{session_id}.mp4` in the bucket.
         */
        put: operations["putRecordingStorage"];
        post?: never;
        /** Forget the account's recording settings: new recordings go to the service's store, with its retention */
        delete: operations["deleteRecordingStorage"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sessions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the caller's sessions, newest first */
        get: operations["listSessions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sessions/{session_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read one session: status, end reason, billed minutes */
        get: operations["getSession"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sessions/{session_id}/captions.vtt": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A session's conversation as WebVTT captions, timed from the start of its video */
        get: operations["getSessionCaptions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sessions/{session_id}/context": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Add information to the conversation, not spoken; optionally answer with it now */
        post: operations["addSessionContext"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sessions/{session_id}/end": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** End a session: close its room and disconnect everyone, the agent included */
        post: operations["endSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sessions/{session_id}/interrupt": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Make the avatar stop speaking, voice and lips */
        post: operations["interruptSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sessions/{session_id}/recording": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a session's recording: its status, length, size and a download link that expires */
        get: operations["getSessionRecording"];
        put?: never;
        post?: never;
        /**
         * Delete a session's recording file; the recording stays listed with deleted_at
         * @description A file in the account's own bucket is deleted there, with the account's saved settings: 409 when they no longer name that bucket, 502 when the bucket refuses.
         */
        delete: operations["deleteSessionRecording"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sessions/{session_id}/say": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Make the avatar say exactly this text, at once or after what it is saying */
        post: operations["saySession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sessions/{session_id}/transcript": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a session's transcript: the visitor's and the agent's turns, with language and times */
        get: operations["getSessionTranscript"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/sessions/start": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Start a realtime session: room, agent, avatar, and a token to join */
        post: operations["startSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the caller's tools, newest first */
        get: operations["listTools"];
        put?: never;
        /**
         * Add a tool; a webhook tool's signing secret is in this answer only
         * @description A webhook tool is called with a POST of JSON `{session_id, identity_id, call_id, tool, arguments}` signed the Standard Webhooks way (`webhook-id`, `webhook-timestamp`, `webhook-signature`); its answer (at most 64 KB) is what the model reads.
         */
        post: operations["createTool"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tools/{tool_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read one tool */
        get: operations["getTool"];
        put?: never;
        post?: never;
        /** Delete a tool; identities drop it, and a running session's next call to it is an error */
        delete: operations["deleteTool"];
        options?: never;
        head?: never;
        /**
         * Change a tool: name, description, parameters, url, timeout_ms
         * @description Sessions already running keep the tools they started with, and call a webhook tool as it is now.
         */
        patch: operations["updateTool"];
        trace?: never;
    };
    "/v1/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Sessions, avatar minutes, identities and credits per day or hour over a range */
        get: operations["getUsage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/visitor-tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Let a web page name its visitor: a short-lived token for one visitor_id, for the embed
         * @description From your backend, for the visitor signed in to your page: pass the token to `<likeness-avatar visitor-token="…">`. An embed session started with it has that visitor and their memory; the token does nothing else (it reads nothing, and works only with this account's publishable keys).
         */
        post: operations["createVisitorToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/visitors": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the account's visitors and what is remembered, newest first */
        get: operations["listVisitors"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/visitors/{visitor_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** What is remembered of a visitor: each fact, when and in which session it was learned */
        get: operations["getVisitor"];
        put?: never;
        post?: never;
        /** Forget a visitor entirely (right to erasure): every fact, and the link from their sessions; a session of theirs still running adds nothing */
        delete: operations["forgetVisitor"];
        options?: never;
        head?: never;
        /** Correct what is remembered of a visitor: the list replaces every fact; the next session reads it */
        patch: operations["updateVisitor"];
        trace?: never;
    };
    "/v1/voices": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the preset voices
         * @description An identity takes a preset with `voice_id` instead of uploading `audio`. `default` is the voice of identities with neither.
         */
        get: operations["listVoices"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the caller's webhook endpoints */
        get: operations["listWebhooks"];
        put?: never;
        /**
         * Add a webhook endpoint; its signing secret is in this answer only
         * @description Events are POSTed as JSON `{type, timestamp, data}` with Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`), retried for about a day until a 2xx comes back.
         */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{webhook_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read one webhook endpoint */
        get: operations["getWebhook"];
        put?: never;
        post?: never;
        /** Delete a webhook endpoint; deliveries not yet made are dropped */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        /** Change a webhook endpoint: URL, events, description, enabled */
        patch: operations["updateWebhook"];
        trace?: never;
    };
    "/v1/webhooks/{webhook_id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** An endpoint's recent deliveries, newest first, with each attempt's status code */
        get: operations["listWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/{webhook_id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a `webhook.test` event to this endpoint now
         * @description Answers at once with the delivery; its outcome shows in the endpoint's deliveries moments later.
         */
        post: operations["testWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: never;
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getCredits: {
        parameters: {
            query?: {
                after?: string;
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "balance": 840,
                     *       "entries": [
                     *         {
                     *           "entry_id": "led_9Rk2Vw7Yp0Lq4Tn",
                     *           "kind": "session_minute",
                     *           "amount": -10,
                     *           "reference": "session:ses_7QmZk4Wp1Hs9Vx2LbR6DnE:minute:2",
                     *           "created_at": "2026-11-24T09:32:04.600Z"
                     *         },
                     *         {
                     *           "entry_id": "led_1Hx5Mz8Bc3Dj6Fs",
                     *           "kind": "onboarding",
                     *           "amount": -50,
                     *           "reference": "identity:idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                     *           "created_at": "2026-11-24T09:30:01.000Z"
                     *         }
                     *       ],
                     *       "has_more": true,
                     *       "low_balance_threshold": 100
                     *     }
                     */
                    "application/json": {
                        /** @description Credits the account holds now. */
                        balance: number;
                        /** @description The ledger, newest first. */
                        entries: {
                            /** @description Signed: negative for what was spent or set aside. */
                            amount: number;
                            /** Format: date-time */
                            created_at: string;
                            entry_id: string;
                            /**
                             * @description `grant`: credits added; `onboarding`: an identity; `session_minute`: a minute an avatar streamed; `recorded_minute`: the recording of that minute, in a recorded session; `session_hold`/`session_release`: a first minute set aside at a start and given back; `adjustment`: by the operator.
                             * @enum {string}
                             */
                            kind: "grant" | "onboarding" | "session_minute" | "recorded_minute" | "session_hold" | "session_release" | "adjustment";
                            /** @description What the entry is for: `identity:idn_…`, `session:ses_…:minute:3`, … */
                            reference: string;
                        }[];
                        /** @description More entries follow: ask again with `after` set to the last entry_id. */
                        has_more: boolean;
                        /** @description A charge that takes the balance below this sends the `credits.low` webhook event; 0: never. Default 100. */
                        low_balance_threshold: number;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
        };
    };
    updateCreditSettings: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "low_balance_threshold": 200
                 *     }
                 */
                "application/json": {
                    /** @description A charge that takes the balance below this sends the `credits.low` webhook event; 0: never. Default 100. */
                    low_balance_threshold: number;
                };
            };
        };
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "balance": 840,
                     *       "low_balance_threshold": 200
                     *     }
                     */
                    "application/json": {
                        balance: number;
                        /** @description A charge that takes the balance below this sends the `credits.low` webhook event; 0: never. Default 100. */
                        low_balance_threshold: number;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
        };
    };
    listDocuments: {
        parameters: {
            query?: {
                after?: string;
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "document_id": "doc_8Hn3Qw6Zr1Ys5Vd0Lm2KtB",
                     *         "name": "Patient leaflet",
                     *         "content_type": "application/pdf",
                     *         "bytes": 182344,
                     *         "status": "ready",
                     *         "detail": null,
                     *         "chunks": 41,
                     *         "test": false,
                     *         "created_at": "2026-11-24T09:30:00.000Z",
                     *         "updated_at": "2026-11-24T09:30:06.000Z"
                     *       }
                     *     ]
                     */
                    "application/json": {
                        /**
                         * @description The upload's size.
                         * @example 18204
                         */
                        bytes: number;
                        /**
                         * @description The passages it was cut into (0 until ready).
                         * @example 31
                         */
                        chunks: number;
                        /**
                         * @description The type read from the bytes and name.
                         * @enum {string}
                         */
                        content_type: "text/plain" | "text/markdown" | "text/html" | "application/pdf";
                        /** Format: date-time */
                        created_at: string;
                        /**
                         * @description Why processing failed, and what to do about it; null otherwise.
                         * @example null
                         */
                        detail: string | null;
                        /** @example doc_6kRvd0cYpGq3vP1tmC1a9Q */
                        document_id: string;
                        /** @example Opening hours and prices */
                        name: string;
                        /**
                         * @description `processing`: being read and embedded (seconds to minutes); `ready`: searched by the sessions it is attached to; `failed`: see `detail`.
                         * @enum {string}
                         */
                        status: "processing" | "ready" | "failed";
                        /**
                         * @description A test resource: made with a test key (`lk_test_…`); it costs nothing and only test keys see it.
                         * @example false
                         */
                        test: boolean;
                        /** Format: date-time */
                        updated_at: string;
                    }[];
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
        };
    };
    uploadDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "multipart/form-data": {
                    /**
                     * Format: binary
                     * @description The document: plain text (UTF-8), Markdown, HTML or PDF with a text layer, judged from its bytes and name; at most KNOWLEDGE_MAX_DOCUMENT_BYTES (10 MB).
                     * @default File
                     */
                    file: Blob;
                    /**
                     * @description What passages from it are attributed to; default the file's name.
                     * @example Opening hours and prices
                     */
                    name?: string;
                };
            };
        };
        responses: {
            /** @description Response for status 202 */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "document_id": "doc_8Hn3Qw6Zr1Ys5Vd0Lm2KtB",
                     *       "name": "Patient leaflet",
                     *       "content_type": "application/pdf",
                     *       "bytes": 182344,
                     *       "status": "processing",
                     *       "detail": null,
                     *       "chunks": 0,
                     *       "test": false,
                     *       "created_at": "2026-11-24T09:30:00.000Z",
                     *       "updated_at": "2026-11-24T09:30:00.000Z"
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description The upload's size.
                         * @example 18204
                         */
                        bytes: number;
                        /**
                         * @description The passages it was cut into (0 until ready).
                         * @example 31
                         */
                        chunks: number;
                        /**
                         * @description The type read from the bytes and name.
                         * @enum {string}
                         */
                        content_type: "text/plain" | "text/markdown" | "text/html" | "application/pdf";
                        /** Format: date-time */
                        created_at: string;
                        /**
                         * @description Why processing failed, and what to do about it; null otherwise.
                         * @example null
                         */
                        detail: string | null;
                        /** @example doc_6kRvd0cYpGq3vP1tmC1a9Q */
                        document_id: string;
                        /** @example Opening hours and prices */
                        name: string;
                        /**
                         * @description `processing`: being read and embedded (seconds to minutes); `ready`: searched by the sessions it is attached to; `failed`: see `detail`.
                         * @enum {string}
                         */
                        status: "processing" | "ready" | "failed";
                        /**
                         * @description A test resource: made with a test key (`lk_test_…`); it costs nothing and only test keys see it.
                         * @example false
                         */
                        test: boolean;
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "Document too large: at most 10 MB"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "Unsupported type: send text, Markdown, HTML or PDF"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
        };
    };
    getDocument: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                document_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "document_id": "doc_3Lp9Vx2Qw7Kt5Nz1Hc8RbM",
                     *       "name": "Scanned price list",
                     *       "content_type": "application/pdf",
                     *       "bytes": 182344,
                     *       "status": "failed",
                     *       "detail": "The PDF has no text layer (scanned pages?); upload a PDF with selectable text, or the text itself",
                     *       "chunks": 0,
                     *       "test": false,
                     *       "created_at": "2026-11-24T09:30:00.000Z",
                     *       "updated_at": "2026-11-24T09:30:06.000Z"
                     *     }
                     */
                    "application/json": {
                        /**
                         * @description The upload's size.
                         * @example 18204
                         */
                        bytes: number;
                        /**
                         * @description The passages it was cut into (0 until ready).
                         * @example 31
                         */
                        chunks: number;
                        /**
                         * @description The type read from the bytes and name.
                         * @enum {string}
                         */
                        content_type: "text/plain" | "text/markdown" | "text/html" | "application/pdf";
                        /** Format: date-time */
                        created_at: string;
                        /**
                         * @description Why processing failed, and what to do about it; null otherwise.
                         * @example null
                         */
                        detail: string | null;
                        /** @example doc_6kRvd0cYpGq3vP1tmC1a9Q */
                        document_id: string;
                        /** @example Opening hours and prices */
                        name: string;
                        /**
                         * @description `processing`: being read and embedded (seconds to minutes); `ready`: searched by the sessions it is attached to; `failed`: see `detail`.
                         * @enum {string}
                         */
                        status: "processing" | "ready" | "failed";
                        /**
                         * @description A test resource: made with a test key (`lk_test_…`); it costs nothing and only test keys see it.
                         * @example false
                         */
                        test: boolean;
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "Document not found"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    deleteDocument: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                document_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 204 */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "Document not found"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    startEmbedSession: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                 *       "form_factor": "phone"
                 *     }
                 */
                "application/json": {
                    /**
                     * @description The visitor's screen, as in POST /v1/sessions/start.
                     * @enum {string}
                     */
                    form_factor?: "phone" | "desktop";
                    /** @description One of the key's `identity_ids`. */
                    identity_id: string;
                    /**
                     * @description The conversation's language; default the identity's.
                     * @enum {string}
                     */
                    language?: "auto" | "en" | "es" | "pl" | "uk";
                    /** @description From your backend (POST /v1/visitor-tokens): the session has that visitor and their memory. Without it an embed session has no visitor. */
                    visitor_token?: string;
                };
            };
        };
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "session_id": "ses_9Lq2Wd7Hs3Vx1KbR6DnZmE",
                     *       "room_name": "ses_9Lq2Wd7Hs3Vx1KbR6DnZmE",
                     *       "token": "eyJhbGciOiJIUzI1NiJ9.eyJ2aWRlbyI6eyJyb29tIjoic2VzXzlMcTJXZDdIczNWeDFLYlI2RG5abUUifX0.c2lnbmF0dXJl",
                     *       "rtc_url": "wss://likeness.example",
                     *       "visual_awareness": true,
                     *       "max_duration_seconds": 1800,
                     *       "test": false,
                     *       "record": false
                     *     }
                     */
                    "application/json": {
                        max_duration_seconds: number;
                        /** @description The session is recorded: the page shows the visitor a visible "Recording" mark. */
                        record: boolean;
                        room_name: string;
                        /** @description Where the page joins the room. */
                        rtc_url: string;
                        session_id: string;
                        /** @description A test session: costs nothing, short, marked "TEST" on the video. */
                        test: boolean;
                        /** @description The visitor's room token (a LiveKit JWT). */
                        token: string;
                        /** @description Whether the agent sees the camera: the page may offer it. */
                        visual_awareness: boolean;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "This page's origin (https://evil.example) may not use this key: add it to the key's allowed_origins"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
            /** @description An error with a message. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "You started 3 conversations in the last minute; retry in 41 s"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    listIdentities: {
        parameters: {
            query?: {
                after?: string;
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                     *         "name": "Ada",
                     *         "language": "en",
                     *         "status": "ready",
                     *         "image": "https://likeness.example/assets/identities/idn_5XwBbH2Lr8Nd0qVjYc3TfA/a1/image.jpg?expires=1795586400&signature=nurT0V5gtKC8ZTd1zCYadgZf2i7JxERtX7MxQk1eVgo",
                     *         "tool_ids": [
                     *           "tool_4Ck2mXbQ9s1LrT0aVnZ7Jp"
                     *         ],
                     *         "document_ids": [
                     *           "doc_8Hn3Qw6Zr1Ys5Vd0Lm2KtB"
                     *         ],
                     *         "test": false,
                     *         "created_at": "2026-11-24T09:30:00.000Z",
                     *         "updated_at": "2026-11-24T09:30:01.000Z"
                     *       }
                     *     ]
                     */
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        /** @description The documents its agent answers from, in order; a document deleted since is no longer listed. */
                        document_ids: string[];
                        identity_id: string;
                        /** Format: uri */
                        image: string;
                        /**
                         * @description auto, en, es, pl or uk
                         * @enum {string}
                         */
                        language: "auto" | "en" | "es" | "pl" | "uk";
                        name: string;
                        /** @enum {string} */
                        status: "created" | "training" | "ready";
                        /**
                         * @description A test resource: made with a test key (`lk_test_…`); it costs nothing and only test keys see it.
                         * @example false
                         */
                        test: boolean;
                        /** @description The tools its agent may call, in order; a tool deleted since is no longer listed. */
                        tool_ids: string[];
                        /** Format: date-time */
                        updated_at: string;
                    }[];
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
        };
    };
    createIdentity: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "multipart/form-data": {
                    /**
                     * Format: binary
                     * @description Voice sample: audio/wav, audio/mpeg or audio/mp4; at most 2 minutes. Cloned into a multilingual voice.
                     * @default File
                     */
                    audio?: Blob;
                    /** @description The documents (GET /v1/documents) the agent answers from, as one JSON array: ["doc_…"]. At most 20, each once, each of this account and not `failed` (422 otherwise). */
                    document_ids?: string;
                    /**
                     * Format: binary
                     * @description Portrait photo: image/jpeg, image/png or image/webp (judged from the bytes).
                     * @default File
                     */
                    image: Blob;
                    /**
                     * @description auto, en, es, pl or uk
                     * @enum {string}
                     */
                    language?: "auto" | "en" | "es" | "pl" | "uk";
                    /** @description Display name. */
                    name: string;
                    /**
                     * @description The outcome its sessions fill in once they end, unless a start gives another (docs/api.md#outcomes): a JSON Schema of type `object` as JSON text, each property with a `description`; the same subset as a tool's `parameters`. `null` clears it.
                     * @example {"type":"object","properties":{"name":{"type":"string","description":"The visitor's name, as they gave it"},"email":{"type":"string","description":"The visitor's email address"},"wants_demo":{"type":"boolean","description":"Whether the visitor asked for a demo"},"demo_day":{"type":"string","enum":["monday","tuesday","wednesday","thursday","friday"],"description":"The weekday the visitor picked for the demo"}}}
                     */
                    outcome_schema?: string;
                    /** @description Renderer pipeline; immutable. Omit for the default. */
                    pipeline_id?: string;
                    /** @description The avatar's system prompt. */
                    prompt: string;
                    /** @description For hosted pipelines: the avatar at the provider that animates this identity (required by `bey`; optional for `anam`, which otherwise makes one from the photo). Checked with the provider: 422 when unknown. Other pipelines refuse it. Immutable. */
                    provider_avatar_id?: string;
                    /** @description Record its sessions unless a start says otherwise (docs/api.md#recordings): "true" or "false". Default false. */
                    record_sessions?: boolean | string;
                    /** @description The tools (GET /v1/tools) the agent may call, in order, as one JSON array: ["tool_…"]. At most 20, each once, each of this account (422 otherwise). */
                    tool_ids?: string;
                    /** @description A preset voice from GET /v1/voices, instead of uploading audio; replaces the voice and drops an uploaded sample. */
                    voice_id?: string;
                };
            };
        };
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                     *       "name": "Ada",
                     *       "language": "en",
                     *       "prompt": "You are Ada, a friendly guide of the city museum.",
                     *       "image": "https://likeness.example/assets/identities/idn_5XwBbH2Lr8Nd0qVjYc3TfA/a1/image.jpg?expires=1795586400&signature=nurT0V5gtKC8ZTd1zCYadgZf2i7JxERtX7MxQk1eVgo",
                     *       "audio": null,
                     *       "voice_id": "default",
                     *       "status": "ready",
                     *       "detail": null,
                     *       "pipeline_id": "builtin",
                     *       "provider_avatar_id": null,
                     *       "tool_ids": [
                     *         "tool_4Ck2mXbQ9s1LrT0aVnZ7Jp"
                     *       ],
                     *       "document_ids": [
                     *         "doc_8Hn3Qw6Zr1Ys5Vd0Lm2KtB"
                     *       ],
                     *       "record_sessions": false,
                     *       "outcome_schema": null,
                     *       "test": false,
                     *       "created_at": "2026-11-24T09:30:00.000Z",
                     *       "updated_at": "2026-11-24T09:30:01.000Z"
                     *     }
                     */
                    "application/json": {
                        /** Format: uri */
                        audio: ((string | null) | null) | null;
                        /** Format: date-time */
                        created_at: string;
                        detail: ((string | null) | null) | null;
                        /** @description The documents its agent answers from, in order; a document deleted since is no longer listed. */
                        document_ids: string[];
                        identity_id: string;
                        /** Format: uri */
                        image: string;
                        /**
                         * @description auto, en, es, pl or uk
                         * @enum {string}
                         */
                        language: "auto" | "en" | "es" | "pl" | "uk";
                        name: string;
                        /**
                         * @description The outcome its sessions fill in unless a start gives another; null: none.
                         * @example {
                         *       "type": "object",
                         *       "properties": {
                         *         "name": {
                         *           "type": "string",
                         *           "description": "The visitor's name, as they gave it"
                         *         },
                         *         "email": {
                         *           "type": "string",
                         *           "description": "The visitor's email address"
                         *         },
                         *         "wants_demo": {
                         *           "type": "boolean",
                         *           "description": "Whether the visitor asked for a demo"
                         *         },
                         *         "demo_day": {
                         *           "type": "string",
                         *           "enum": [
                         *             "monday",
                         *             "tuesday",
                         *             "wednesday",
                         *             "thursday",
                         *             "friday"
                         *           ],
                         *           "description": "The weekday the visitor picked for the demo"
                         *         }
                         *       }
                         *     }
                         */
                        outcome_schema: (({
                            [key: string]: unknown;
                        } | null) | null) | null;
                        pipeline_id: string;
                        prompt: string;
                        /** @description The hosted provider’s avatar that animates the identity (pipelines `anam`, `bey`); null for the others. */
                        provider_avatar_id: ((string | null) | null) | null;
                        /** @description Its sessions are recorded unless a start says otherwise. */
                        record_sessions: boolean;
                        /** @enum {string} */
                        status: "created" | "training" | "ready";
                        /**
                         * @description A test resource: made with a test key (`lk_test_…`); it costs nothing and only test keys see it.
                         * @example false
                         */
                        test: boolean;
                        /** @description The tools its agent may call, in order; a tool deleted since is no longer listed. */
                        tool_ids: string[];
                        /** Format: date-time */
                        updated_at: string;
                        /** @description The preset voice (GET /v1/voices; `default` when none was chosen); null when the voice is cloned from `audio`. */
                        voice_id: ((string | null) | null) | null;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": [
                     *         {
                     *           "loc": [
                     *             "body",
                     *             "image"
                     *           ],
                     *           "msg": "No face found in the image",
                     *           "type": "image.no_face"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
            /** @description An error with a message. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    getIdentity: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                identity_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                     *       "name": "Ada",
                     *       "language": "en",
                     *       "prompt": "You are Ada, a friendly guide of the city museum.",
                     *       "image": "https://likeness.example/assets/identities/idn_5XwBbH2Lr8Nd0qVjYc3TfA/a1/image.jpg?expires=1795586400&signature=nurT0V5gtKC8ZTd1zCYadgZf2i7JxERtX7MxQk1eVgo",
                     *       "audio": null,
                     *       "voice_id": "default",
                     *       "status": "ready",
                     *       "detail": null,
                     *       "pipeline_id": "builtin",
                     *       "provider_avatar_id": null,
                     *       "tool_ids": [
                     *         "tool_4Ck2mXbQ9s1LrT0aVnZ7Jp"
                     *       ],
                     *       "document_ids": [
                     *         "doc_8Hn3Qw6Zr1Ys5Vd0Lm2KtB"
                     *       ],
                     *       "record_sessions": false,
                     *       "outcome_schema": null,
                     *       "test": false,
                     *       "created_at": "2026-11-24T09:30:00.000Z",
                     *       "updated_at": "2026-11-24T09:30:01.000Z"
                     *     }
                     */
                    "application/json": {
                        /** Format: uri */
                        audio: ((string | null) | null) | null;
                        /** Format: date-time */
                        created_at: string;
                        detail: ((string | null) | null) | null;
                        /** @description The documents its agent answers from, in order; a document deleted since is no longer listed. */
                        document_ids: string[];
                        identity_id: string;
                        /** Format: uri */
                        image: string;
                        /**
                         * @description auto, en, es, pl or uk
                         * @enum {string}
                         */
                        language: "auto" | "en" | "es" | "pl" | "uk";
                        name: string;
                        /**
                         * @description The outcome its sessions fill in unless a start gives another; null: none.
                         * @example {
                         *       "type": "object",
                         *       "properties": {
                         *         "name": {
                         *           "type": "string",
                         *           "description": "The visitor's name, as they gave it"
                         *         },
                         *         "email": {
                         *           "type": "string",
                         *           "description": "The visitor's email address"
                         *         },
                         *         "wants_demo": {
                         *           "type": "boolean",
                         *           "description": "Whether the visitor asked for a demo"
                         *         },
                         *         "demo_day": {
                         *           "type": "string",
                         *           "enum": [
                         *             "monday",
                         *             "tuesday",
                         *             "wednesday",
                         *             "thursday",
                         *             "friday"
                         *           ],
                         *           "description": "The weekday the visitor picked for the demo"
                         *         }
                         *       }
                         *     }
                         */
                        outcome_schema: (({
                            [key: string]: unknown;
                        } | null) | null) | null;
                        pipeline_id: string;
                        prompt: string;
                        /** @description The hosted provider’s avatar that animates the identity (pipelines `anam`, `bey`); null for the others. */
                        provider_avatar_id: ((string | null) | null) | null;
                        /** @description Its sessions are recorded unless a start says otherwise. */
                        record_sessions: boolean;
                        /** @enum {string} */
                        status: "created" | "training" | "ready";
                        /**
                         * @description A test resource: made with a test key (`lk_test_…`); it costs nothing and only test keys see it.
                         * @example false
                         */
                        test: boolean;
                        /** @description The tools its agent may call, in order; a tool deleted since is no longer listed. */
                        tool_ids: string[];
                        /** Format: date-time */
                        updated_at: string;
                        /** @description The preset voice (GET /v1/voices; `default` when none was chosen); null when the voice is cloned from `audio`. */
                        voice_id: ((string | null) | null) | null;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "Identity not found"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    deleteIdentity: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                identity_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 204 */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    updateIdentity: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                identity_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "multipart/form-data": {
                    /**
                     * Format: binary
                     * @description A new voice sample: retrains (202) and replaces the voice.
                     * @default File
                     */
                    audio?: Blob;
                    /** @description The documents (GET /v1/documents) the agent answers from, as one JSON array: ["doc_…"]. At most 20, each once, each of this account and not `failed` (422 otherwise). */
                    document_ids?: string;
                    /**
                     * Format: binary
                     * @default File
                     */
                    image?: Blob;
                    /**
                     * @description auto, en, es, pl or uk
                     * @enum {string}
                     */
                    language?: "auto" | "en" | "es" | "pl" | "uk";
                    name?: string;
                    /**
                     * @description The outcome its sessions fill in once they end, unless a start gives another (docs/api.md#outcomes): a JSON Schema of type `object` as JSON text, each property with a `description`; the same subset as a tool's `parameters`. `null` clears it.
                     * @example {"type":"object","properties":{"name":{"type":"string","description":"The visitor's name, as they gave it"},"email":{"type":"string","description":"The visitor's email address"},"wants_demo":{"type":"boolean","description":"Whether the visitor asked for a demo"},"demo_day":{"type":"string","enum":["monday","tuesday","wednesday","thursday","friday"],"description":"The weekday the visitor picked for the demo"}}}
                     */
                    outcome_schema?: string;
                    /** @description Immutable: sending it answers 422. */
                    pipeline_id?: string;
                    /** @description Required with image or audio uploads. */
                    prompt?: string;
                    /** @description Immutable: sending it answers 422. */
                    provider_avatar_id?: string;
                    /** @description Record its sessions unless a start says otherwise (docs/api.md#recordings): "true" or "false". Default false. */
                    record_sessions?: boolean | string;
                    /** @description The tools (GET /v1/tools) the agent may call, in order, as one JSON array: ["tool_…"]. At most 20, each once, each of this account (422 otherwise). */
                    tool_ids?: string;
                    /** @description A preset voice from GET /v1/voices, instead of uploading audio; replaces the voice and drops an uploaded sample. */
                    voice_id?: string;
                };
            };
        };
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                     *       "name": "Ada Lovelace",
                     *       "language": "en",
                     *       "prompt": "You are Ada, a friendly guide of the city museum.",
                     *       "image": "https://likeness.example/assets/identities/idn_5XwBbH2Lr8Nd0qVjYc3TfA/a1/image.jpg?expires=1795586400&signature=nurT0V5gtKC8ZTd1zCYadgZf2i7JxERtX7MxQk1eVgo",
                     *       "audio": null,
                     *       "voice_id": "default",
                     *       "status": "ready",
                     *       "detail": null,
                     *       "pipeline_id": "builtin",
                     *       "provider_avatar_id": null,
                     *       "tool_ids": [
                     *         "tool_4Ck2mXbQ9s1LrT0aVnZ7Jp"
                     *       ],
                     *       "document_ids": [
                     *         "doc_8Hn3Qw6Zr1Ys5Vd0Lm2KtB"
                     *       ],
                     *       "record_sessions": false,
                     *       "outcome_schema": null,
                     *       "test": false,
                     *       "created_at": "2026-11-24T09:30:00.000Z",
                     *       "updated_at": "2026-11-24T09:30:01.000Z"
                     *     }
                     */
                    "application/json": {
                        /** Format: uri */
                        audio: ((string | null) | null) | null;
                        /** Format: date-time */
                        created_at: string;
                        detail: ((string | null) | null) | null;
                        /** @description The documents its agent answers from, in order; a document deleted since is no longer listed. */
                        document_ids: string[];
                        identity_id: string;
                        /** Format: uri */
                        image: string;
                        /**
                         * @description auto, en, es, pl or uk
                         * @enum {string}
                         */
                        language: "auto" | "en" | "es" | "pl" | "uk";
                        name: string;
                        /**
                         * @description The outcome its sessions fill in unless a start gives another; null: none.
                         * @example {
                         *       "type": "object",
                         *       "properties": {
                         *         "name": {
                         *           "type": "string",
                         *           "description": "The visitor's name, as they gave it"
                         *         },
                         *         "email": {
                         *           "type": "string",
                         *           "description": "The visitor's email address"
                         *         },
                         *         "wants_demo": {
                         *           "type": "boolean",
                         *           "description": "Whether the visitor asked for a demo"
                         *         },
                         *         "demo_day": {
                         *           "type": "string",
                         *           "enum": [
                         *             "monday",
                         *             "tuesday",
                         *             "wednesday",
                         *             "thursday",
                         *             "friday"
                         *           ],
                         *           "description": "The weekday the visitor picked for the demo"
                         *         }
                         *       }
                         *     }
                         */
                        outcome_schema: (({
                            [key: string]: unknown;
                        } | null) | null) | null;
                        pipeline_id: string;
                        prompt: string;
                        /** @description The hosted provider’s avatar that animates the identity (pipelines `anam`, `bey`); null for the others. */
                        provider_avatar_id: ((string | null) | null) | null;
                        /** @description Its sessions are recorded unless a start says otherwise. */
                        record_sessions: boolean;
                        /** @enum {string} */
                        status: "created" | "training" | "ready";
                        /**
                         * @description A test resource: made with a test key (`lk_test_…`); it costs nothing and only test keys see it.
                         * @example false
                         */
                        test: boolean;
                        /** @description The tools its agent may call, in order; a tool deleted since is no longer listed. */
                        tool_ids: string[];
                        /** Format: date-time */
                        updated_at: string;
                        /** @description The preset voice (GET /v1/voices; `default` when none was chosen); null when the voice is cloned from `audio`. */
                        voice_id: ((string | null) | null) | null;
                    };
                };
            };
            /** @description Response for status 202 */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                     *       "name": "Ada",
                     *       "language": "en",
                     *       "prompt": "You are Ada, a friendly guide of the city museum.",
                     *       "image": "https://likeness.example/assets/identities/idn_5XwBbH2Lr8Nd0qVjYc3TfA/a1/image.jpg?expires=1795586400&signature=nurT0V5gtKC8ZTd1zCYadgZf2i7JxERtX7MxQk1eVgo",
                     *       "audio": null,
                     *       "voice_id": "default",
                     *       "status": "training",
                     *       "detail": null,
                     *       "pipeline_id": "builtin",
                     *       "provider_avatar_id": null,
                     *       "tool_ids": [
                     *         "tool_4Ck2mXbQ9s1LrT0aVnZ7Jp"
                     *       ],
                     *       "document_ids": [
                     *         "doc_8Hn3Qw6Zr1Ys5Vd0Lm2KtB"
                     *       ],
                     *       "record_sessions": false,
                     *       "outcome_schema": null,
                     *       "test": false,
                     *       "created_at": "2026-11-24T09:30:00.000Z",
                     *       "updated_at": "2026-11-24T09:30:01.000Z"
                     *     }
                     */
                    "application/json": {
                        /** Format: uri */
                        audio: ((string | null) | null) | null;
                        /** Format: date-time */
                        created_at: string;
                        detail: ((string | null) | null) | null;
                        /** @description The documents its agent answers from, in order; a document deleted since is no longer listed. */
                        document_ids: string[];
                        identity_id: string;
                        /** Format: uri */
                        image: string;
                        /**
                         * @description auto, en, es, pl or uk
                         * @enum {string}
                         */
                        language: "auto" | "en" | "es" | "pl" | "uk";
                        name: string;
                        /**
                         * @description The outcome its sessions fill in unless a start gives another; null: none.
                         * @example {
                         *       "type": "object",
                         *       "properties": {
                         *         "name": {
                         *           "type": "string",
                         *           "description": "The visitor's name, as they gave it"
                         *         },
                         *         "email": {
                         *           "type": "string",
                         *           "description": "The visitor's email address"
                         *         },
                         *         "wants_demo": {
                         *           "type": "boolean",
                         *           "description": "Whether the visitor asked for a demo"
                         *         },
                         *         "demo_day": {
                         *           "type": "string",
                         *           "enum": [
                         *             "monday",
                         *             "tuesday",
                         *             "wednesday",
                         *             "thursday",
                         *             "friday"
                         *           ],
                         *           "description": "The weekday the visitor picked for the demo"
                         *         }
                         *       }
                         *     }
                         */
                        outcome_schema: (({
                            [key: string]: unknown;
                        } | null) | null) | null;
                        pipeline_id: string;
                        prompt: string;
                        /** @description The hosted provider’s avatar that animates the identity (pipelines `anam`, `bey`); null for the others. */
                        provider_avatar_id: ((string | null) | null) | null;
                        /** @description Its sessions are recorded unless a start says otherwise. */
                        record_sessions: boolean;
                        /** @enum {string} */
                        status: "created" | "training" | "ready";
                        /**
                         * @description A test resource: made with a test key (`lk_test_…`); it costs nothing and only test keys see it.
                         * @example false
                         */
                        test: boolean;
                        /** @description The tools its agent may call, in order; a tool deleted since is no longer listed. */
                        tool_ids: string[];
                        /** Format: date-time */
                        updated_at: string;
                        /** @description The preset voice (GET /v1/voices; `default` when none was chosen); null when the voice is cloned from `audio`. */
                        voice_id: ((string | null) | null) | null;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
            /** @description An error with a message. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    getIdentityStatus: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                identity_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                     *       "status": "training",
                     *       "updated_at": "2026-11-24T09:30:01.000Z",
                     *       "detail": null
                     *     }
                     */
                    "application/json": {
                        detail: ((string | null) | null) | null;
                        identity_id: string;
                        /** @enum {string} */
                        status: "created" | "training" | "ready";
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    listPipelines: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "pipeline_id": "builtin",
                     *         "description": "The CPU talking head, drawn in the agent job from the photo.",
                     *         "default": true,
                     *         "renders": {
                     *           "kind": "frames",
                     *           "fps": 25,
                     *           "portrait": {
                     *             "width": 540,
                     *             "height": 960
                     *           },
                     *           "landscape": {
                     *             "width": 960,
                     *             "height": 540
                     *           },
                     *           "provider": null
                     *         }
                     *       }
                     *     ]
                     */
                    "application/json": {
                        /** @description Used when an identity is created without `pipeline_id`. */
                        default: boolean;
                        description: string;
                        /** @description Send as `pipeline_id` when creating an identity; it cannot be changed afterwards. */
                        pipeline_id: string;
                        renders: {
                            fps: (number | null) | null;
                            /**
                             * @description `frames`: the agent draws and publishes the avatar video; `avatar_service`: a separate avatar participant joins the room and publishes audio and video on the agent’s behalf.
                             * @enum {string}
                             */
                            kind: "frames" | "avatar_service";
                            /** @description Video size for `form_factor` `desktop`; null where landscape video is disabled (desktops then get portrait). */
                            landscape: (({
                                height: number;
                                width: number;
                            } | null) | null) | null;
                            /** @description Video size for `form_factor` `phone` and when none is sent (`frames` only). */
                            portrait: (({
                                height: number;
                                width: number;
                            } | null) | null) | null;
                            /** @description The avatar service (`avatar_service` only). */
                            provider: ((string | null) | null) | null;
                        };
                    }[];
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    listPublishableKeys: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "publishable_key_id": "pbk_2xVb7Qm4LpZ9sK1cN8rT5w",
                     *         "publishable_key": "lk_pub_6fQ2mN8xLk1Vb4Zr7Tc0Hs9Wd3Py5Ju2Ga6Ee1Oi8Rt",
                     *         "name": "Shop website",
                     *         "allowed_origins": [
                     *           "https://shop.example",
                     *           "https://www.shop.example"
                     *         ],
                     *         "identity_ids": [
                     *           "idn_5XwBbH2Lr8Nd0qVjYc3TfA"
                     *         ],
                     *         "limits": {
                     *           "sessions_per_minute": 10,
                     *           "concurrent_sessions": 5,
                     *           "visitor_sessions_per_minute": 3,
                     *           "visitor_concurrent_sessions": 1
                     *         },
                     *         "record_sessions": null,
                     *         "test": false,
                     *         "created_at": "2026-11-27T09:30:00.000Z",
                     *         "updated_at": "2026-11-27T09:30:00.000Z",
                     *         "last_used_at": null,
                     *         "revoked_at": null
                     *       }
                     *     ]
                     */
                    "application/json": {
                        allowed_origins: string[];
                        /** Format: date-time */
                        created_at: string;
                        identity_ids: string[];
                        /** Format: date-time */
                        last_used_at: string | null;
                        limits: {
                            /** @description Its sessions running at once. Default 5. */
                            concurrent_sessions: number;
                            /** @description Sessions started with the key in any minute. Default 10. */
                            sessions_per_minute: number;
                            /** @description Sessions of one visitor address running at once. Default 1. */
                            visitor_concurrent_sessions: number;
                            /** @description Sessions one visitor address starts with it in any minute. Default 3. */
                            visitor_sessions_per_minute: number;
                        };
                        name: string | null;
                        /** @description The key to put in your page (`lk_pub_…`; a test one `lk_pub_test_…`). Public by design. */
                        publishable_key: string;
                        /** @example pbk_2xVb7Qm4LpZ9sK1cN8rT5w */
                        publishable_key_id: string;
                        /** @description Whether the key's sessions are recorded (docs/api.md#recordings): the site owner decides for its embed. null (default): as each identity's `record_sessions` says. */
                        record_sessions: ((boolean | null) | null) | null;
                        /** Format: date-time */
                        revoked_at: string | null;
                        /** @description Made with a test key: its sessions are test sessions (docs/api.md#test-mode). */
                        test: boolean;
                        /** Format: date-time */
                        updated_at: string;
                    }[];
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    createPublishableKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Shop website",
                 *       "allowed_origins": [
                 *         "https://shop.example",
                 *         "https://www.shop.example"
                 *       ],
                 *       "identity_ids": [
                 *         "idn_5XwBbH2Lr8Nd0qVjYc3TfA"
                 *       ]
                 *     }
                 */
                "application/json": {
                    /**
                     * @description The exact origins (scheme, host and port, no path) whose pages may start sessions with the key, e.g. `https://shop.example`. Browsers send it as `Origin`.
                     * @example [
                     *       "https://shop.example",
                     *       "https://www.shop.example"
                     *     ]
                     */
                    allowed_origins: string[];
                    /**
                     * @description The identities of this account the key may start sessions of (one not ready yet answers the start's 409).
                     * @example [
                     *       "idn_7Hq2kLm9PzX4vB1nR8sT3w"
                     *     ]
                     */
                    identity_ids: string[];
                    /** @description Any of the four; the rest take their defaults. */
                    limits?: {
                        /** @description Its sessions running at once. Default 5. */
                        concurrent_sessions?: number;
                        /** @description Sessions started with the key in any minute. Default 10. */
                        sessions_per_minute?: number;
                        /** @description Sessions of one visitor address running at once. Default 1. */
                        visitor_concurrent_sessions?: number;
                        /** @description Sessions one visitor address starts with it in any minute. Default 3. */
                        visitor_sessions_per_minute?: number;
                    };
                    /** @example Shop website */
                    name?: string;
                    /** @description Whether the key's sessions are recorded (docs/api.md#recordings): the site owner decides for its embed. null (default): as each identity's `record_sessions` says. */
                    record_sessions?: ((boolean | null) | null) | null;
                };
            };
        };
        responses: {
            /** @description Response for status 201 */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "publishable_key_id": "pbk_2xVb7Qm4LpZ9sK1cN8rT5w",
                     *       "publishable_key": "lk_pub_6fQ2mN8xLk1Vb4Zr7Tc0Hs9Wd3Py5Ju2Ga6Ee1Oi8Rt",
                     *       "name": "Shop website",
                     *       "allowed_origins": [
                     *         "https://shop.example",
                     *         "https://www.shop.example"
                     *       ],
                     *       "identity_ids": [
                     *         "idn_5XwBbH2Lr8Nd0qVjYc3TfA"
                     *       ],
                     *       "limits": {
                     *         "sessions_per_minute": 10,
                     *         "concurrent_sessions": 5,
                     *         "visitor_sessions_per_minute": 3,
                     *         "visitor_concurrent_sessions": 1
                     *       },
                     *       "record_sessions": null,
                     *       "test": false,
                     *       "created_at": "2026-11-27T09:30:00.000Z",
                     *       "updated_at": "2026-11-27T09:30:00.000Z",
                     *       "last_used_at": null,
                     *       "revoked_at": null
                     *     }
                     */
                    "application/json": {
                        allowed_origins: string[];
                        /** Format: date-time */
                        created_at: string;
                        identity_ids: string[];
                        /** Format: date-time */
                        last_used_at: string | null;
                        limits: {
                            /** @description Its sessions running at once. Default 5. */
                            concurrent_sessions: number;
                            /** @description Sessions started with the key in any minute. Default 10. */
                            sessions_per_minute: number;
                            /** @description Sessions of one visitor address running at once. Default 1. */
                            visitor_concurrent_sessions: number;
                            /** @description Sessions one visitor address starts with it in any minute. Default 3. */
                            visitor_sessions_per_minute: number;
                        };
                        name: string | null;
                        /** @description The key to put in your page (`lk_pub_…`; a test one `lk_pub_test_…`). Public by design. */
                        publishable_key: string;
                        /** @example pbk_2xVb7Qm4LpZ9sK1cN8rT5w */
                        publishable_key_id: string;
                        /** @description Whether the key's sessions are recorded (docs/api.md#recordings): the site owner decides for its embed. null (default): as each identity's `record_sessions` says. */
                        record_sessions: ((boolean | null) | null) | null;
                        /** Format: date-time */
                        revoked_at: string | null;
                        /** @description Made with a test key: its sessions are test sessions (docs/api.md#test-mode). */
                        test: boolean;
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": [
                     *         {
                     *           "loc": [
                     *             "body",
                     *             "allowed_origins",
                     *             0
                     *           ],
                     *           "msg": "\"https://shop.example/contact\" is not an origin: scheme, host and optional port, no path (e.g. https://shop.example)",
                     *           "type": "origin_invalid"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
        };
    };
    getPublishableKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                publishable_key_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "publishable_key_id": "pbk_2xVb7Qm4LpZ9sK1cN8rT5w",
                     *       "publishable_key": "lk_pub_6fQ2mN8xLk1Vb4Zr7Tc0Hs9Wd3Py5Ju2Ga6Ee1Oi8Rt",
                     *       "name": "Shop website",
                     *       "allowed_origins": [
                     *         "https://shop.example",
                     *         "https://www.shop.example"
                     *       ],
                     *       "identity_ids": [
                     *         "idn_5XwBbH2Lr8Nd0qVjYc3TfA"
                     *       ],
                     *       "limits": {
                     *         "sessions_per_minute": 10,
                     *         "concurrent_sessions": 5,
                     *         "visitor_sessions_per_minute": 3,
                     *         "visitor_concurrent_sessions": 1
                     *       },
                     *       "record_sessions": null,
                     *       "test": false,
                     *       "created_at": "2026-11-27T09:30:00.000Z",
                     *       "updated_at": "2026-11-27T09:30:00.000Z",
                     *       "last_used_at": null,
                     *       "revoked_at": null
                     *     }
                     */
                    "application/json": {
                        allowed_origins: string[];
                        /** Format: date-time */
                        created_at: string;
                        identity_ids: string[];
                        /** Format: date-time */
                        last_used_at: string | null;
                        limits: {
                            /** @description Its sessions running at once. Default 5. */
                            concurrent_sessions: number;
                            /** @description Sessions started with the key in any minute. Default 10. */
                            sessions_per_minute: number;
                            /** @description Sessions of one visitor address running at once. Default 1. */
                            visitor_concurrent_sessions: number;
                            /** @description Sessions one visitor address starts with it in any minute. Default 3. */
                            visitor_sessions_per_minute: number;
                        };
                        name: string | null;
                        /** @description The key to put in your page (`lk_pub_…`; a test one `lk_pub_test_…`). Public by design. */
                        publishable_key: string;
                        /** @example pbk_2xVb7Qm4LpZ9sK1cN8rT5w */
                        publishable_key_id: string;
                        /** @description Whether the key's sessions are recorded (docs/api.md#recordings): the site owner decides for its embed. null (default): as each identity's `record_sessions` says. */
                        record_sessions: ((boolean | null) | null) | null;
                        /** Format: date-time */
                        revoked_at: string | null;
                        /** @description Made with a test key: its sessions are test sessions (docs/api.md#test-mode). */
                        test: boolean;
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "Publishable key not found"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    revokePublishableKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                publishable_key_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 204 */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    updatePublishableKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                publishable_key_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "limits": {
                 *         "concurrent_sessions": 20
                 *       }
                 *     }
                 */
                "application/json": {
                    /**
                     * @description The exact origins (scheme, host and port, no path) whose pages may start sessions with the key, e.g. `https://shop.example`. Browsers send it as `Origin`.
                     * @example [
                     *       "https://shop.example",
                     *       "https://www.shop.example"
                     *     ]
                     */
                    allowed_origins?: string[];
                    /**
                     * @description The identities of this account the key may start sessions of (one not ready yet answers the start's 409).
                     * @example [
                     *       "idn_7Hq2kLm9PzX4vB1nR8sT3w"
                     *     ]
                     */
                    identity_ids?: string[];
                    /** @description Any of the four; the rest stay. */
                    limits?: {
                        /** @description Its sessions running at once. Default 5. */
                        concurrent_sessions?: number;
                        /** @description Sessions started with the key in any minute. Default 10. */
                        sessions_per_minute?: number;
                        /** @description Sessions of one visitor address running at once. Default 1. */
                        visitor_concurrent_sessions?: number;
                        /** @description Sessions one visitor address starts with it in any minute. Default 3. */
                        visitor_sessions_per_minute?: number;
                    };
                    /** @example Shop website */
                    name?: string;
                    /** @description Whether the key's sessions are recorded (docs/api.md#recordings): the site owner decides for its embed. null (default): as each identity's `record_sessions` says. */
                    record_sessions?: ((boolean | null) | null) | null;
                };
            };
        };
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "publishable_key_id": "pbk_2xVb7Qm4LpZ9sK1cN8rT5w",
                     *       "publishable_key": "lk_pub_6fQ2mN8xLk1Vb4Zr7Tc0Hs9Wd3Py5Ju2Ga6Ee1Oi8Rt",
                     *       "name": "Shop website",
                     *       "allowed_origins": [
                     *         "https://shop.example",
                     *         "https://www.shop.example"
                     *       ],
                     *       "identity_ids": [
                     *         "idn_5XwBbH2Lr8Nd0qVjYc3TfA"
                     *       ],
                     *       "limits": {
                     *         "sessions_per_minute": 10,
                     *         "concurrent_sessions": 20,
                     *         "visitor_sessions_per_minute": 3,
                     *         "visitor_concurrent_sessions": 1
                     *       },
                     *       "record_sessions": null,
                     *       "test": false,
                     *       "created_at": "2026-11-27T09:30:00.000Z",
                     *       "updated_at": "2026-11-27T09:31:00.000Z",
                     *       "last_used_at": null,
                     *       "revoked_at": null
                     *     }
                     */
                    "application/json": {
                        allowed_origins: string[];
                        /** Format: date-time */
                        created_at: string;
                        identity_ids: string[];
                        /** Format: date-time */
                        last_used_at: string | null;
                        limits: {
                            /** @description Its sessions running at once. Default 5. */
                            concurrent_sessions: number;
                            /** @description Sessions started with the key in any minute. Default 10. */
                            sessions_per_minute: number;
                            /** @description Sessions of one visitor address running at once. Default 1. */
                            visitor_concurrent_sessions: number;
                            /** @description Sessions one visitor address starts with it in any minute. Default 3. */
                            visitor_sessions_per_minute: number;
                        };
                        name: string | null;
                        /** @description The key to put in your page (`lk_pub_…`; a test one `lk_pub_test_…`). Public by design. */
                        publishable_key: string;
                        /** @example pbk_2xVb7Qm4LpZ9sK1cN8rT5w */
                        publishable_key_id: string;
                        /** @description Whether the key's sessions are recorded (docs/api.md#recordings): the site owner decides for its embed. null (default): as each identity's `record_sessions` says. */
                        record_sessions: ((boolean | null) | null) | null;
                        /** Format: date-time */
                        revoked_at: string | null;
                        /** @description Made with a test key: its sessions are test sessions (docs/api.md#test-mode). */
                        test: boolean;
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
        };
    };
    getRecordingStorage: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description An account's recording settings, without the secret. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "store": "customer",
                     *       "endpoint": "https://s3.eu-central-1.amazonaws.com",
                     *       "bucket": "acme-avatar-recordings",
                     *       "region": "eu-central-1",
                     *       "prefix": "likeness/",
                     *       "access_key_id": "AKIAIOSFODNN7EXAMPLE",
                     *       "secret_set": true,
                     *       "retention_days": null,
                     *       "updated_at": "2026-11-24T08:12:40.000Z"
                     *     }
                     */
                    "application/json": {
                        access_key_id: ((string | null) | null) | null;
                        bucket: ((string | null) | null) | null;
                        endpoint: ((string | null) | null) | null;
                        prefix: string;
                        region: ((string | null) | null) | null;
                        retention_days: (number | null) | null;
                        /** @description A secret is saved (it is never returned). */
                        secret_set: boolean;
                        /**
                         * @description Where new recordings go: `customer` (the bucket below) or `service` (the service's store).
                         * @enum {string}
                         */
                        store: "service" | "customer";
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "No recording storage is set: recordings go to the service store"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    putRecordingStorage: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description An account's recording settings. Give `endpoint`, `bucket`, `access_key_id` and `secret_access_key` together for the account's own bucket (checked by writing and deleting a test object before it is saved), or none of them for the service's store; `retention_days` either way. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "endpoint": "https://s3.eu-central-1.amazonaws.com",
                 *       "bucket": "acme-avatar-recordings",
                 *       "region": "eu-central-1",
                 *       "prefix": "likeness/",
                 *       "access_key_id": "AKIAIOSFODNN7EXAMPLE",
                 *       "secret_access_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                 *       "retention_days": null
                 *     }
                 */
                "application/json": {
                    access_key_id?: string;
                    bucket?: string;
                    /**
                     * Format: uri
                     * @description The bucket's S3-compatible endpoint: https (http only where the operator allows private addresses). Its host must resolve to public addresses unless the operator set WEBHOOKS_ALLOW_PRIVATE.
                     */
                    endpoint?: string;
                    /** @description Put before every key written in the bucket (e.g. `recordings/`); a recording is `{prefix}{session_id}.mp4`. */
                    prefix?: string;
                    region?: ((string | null) | null) | null;
                    retention_days?: (number | null) | null;
                    /** @description Write-only: kept encrypted, never returned. Required with the other bucket fields (PUT replaces the whole resource). */
                    secret_access_key?: string;
                };
            };
        };
        responses: {
            /** @description An account's recording settings, without the secret. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "store": "customer",
                     *       "endpoint": "https://s3.eu-central-1.amazonaws.com",
                     *       "bucket": "acme-avatar-recordings",
                     *       "region": "eu-central-1",
                     *       "prefix": "likeness/",
                     *       "access_key_id": "AKIAIOSFODNN7EXAMPLE",
                     *       "secret_set": true,
                     *       "retention_days": null,
                     *       "updated_at": "2026-11-24T08:12:40.000Z"
                     *     }
                     */
                    "application/json": {
                        access_key_id: ((string | null) | null) | null;
                        bucket: ((string | null) | null) | null;
                        endpoint: ((string | null) | null) | null;
                        prefix: string;
                        region: ((string | null) | null) | null;
                        retention_days: (number | null) | null;
                        /** @description A secret is saved (it is never returned). */
                        secret_set: boolean;
                        /**
                         * @description Where new recordings go: `customer` (the bucket below) or `service` (the service's store).
                         * @enum {string}
                         */
                        store: "service" | "customer";
                        /** Format: date-time */
                        updated_at: string;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": [
                     *         {
                     *           "loc": [
                     *             "body",
                     *             "bucket"
                     *           ],
                     *           "msg": "writing a test object to the bucket acme-avatar-recordings failed: AccessDenied: Access Denied",
                     *           "type": "storage_check_failed"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
            /** @description An error with a message. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "This service cannot keep a bucket's secret: its operator must set RECORDING_STORAGE_KEY (32 bytes, base64 or hex) first"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    deleteRecordingStorage: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 204 */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    listSessions: {
        parameters: {
            query?: {
                after?: string;
                limit?: number;
                status?: "running" | "ended";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "session_id": "ses_7QmZk4Wp1Hs9Vx2LbR6DnE",
                     *         "status": "ended",
                     *         "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                     *         "avatar_enabled": true,
                     *         "language": "en",
                     *         "visual_awareness": true,
                     *         "form_factor": "phone",
                     *         "test": false,
                     *         "publishable_key_id": null,
                     *         "end_reason": "ended_by_api",
                     *         "billed_minutes": 3,
                     *         "credits_charged": 30,
                     *         "visitor_seconds": 165,
                     *         "streamed_seconds": 165,
                     *         "duration_seconds": 170,
                     *         "created_at": "2026-11-24T09:30:00.000Z",
                     *         "joined_at": "2026-11-24T09:30:04.000Z",
                     *         "streaming_started_at": "2026-11-24T09:30:04.600Z",
                     *         "ended_at": "2026-11-24T09:32:50.000Z",
                     *         "avatar_fallback": null,
                     *         "metrics": {
                     *           "first_frame_ms": 600,
                     *           "voice_to_voice_ms": {
                     *             "p50": 1180,
                     *             "p95": 1720
                     *           },
                     *           "fps": 24.9,
                     *           "turns": 7,
                     *           "interruptions": 1,
                     *           "tool_calls": 1,
                     *           "providers": {
                     *             "stt": "deepgram",
                     *             "llm": "openai-compatible",
                     *             "tts": "elevenlabs"
                     *           }
                     *         },
                     *         "context": null,
                     *         "has_context": true,
                     *         "greeting": "Welcome back, Zofia! Shall we plan your visit to the Orsay?",
                     *         "client_control": false,
                     *         "idle_timeout_seconds": 120,
                     *         "record": true,
                     *         "recording_notice": "This conversation is recorded.",
                     *         "summary": "The visitor asked which museums to see in one afternoon in Paris. Ada suggested the Musée d’Orsay and the Orangerie, both near the Tuileries. The visitor planned to book Orsay tickets for 2 pm.",
                     *         "summary_status": "ready",
                     *         "summary_detail": null,
                     *         "outcome_schema": null,
                     *         "outcome": {
                     *           "museums": "Musée d’Orsay, Orangerie",
                     *           "wants_tickets": true
                     *         },
                     *         "outcome_status": "ready",
                     *         "outcome_detail": null,
                     *         "visitor_id": "crm-4821",
                     *         "memory_scope": "identity",
                     *         "tool_ids": [
                     *           "tool_4Ck2mXbQ9s1LrT0aVnZ7Jp"
                     *         ],
                     *         "document_ids": [
                     *           "doc_8Hn3Qw6Zr1Ys5Vd0Lm2KtB"
                     *         ]
                     *       }
                     *     ]
                     */
                    "application/json": {
                        avatar_enabled: boolean;
                        avatar_fallback: (({
                            /**
                             * @description `builtin`: the talking head; `standin`: the photo.
                             * @enum {string}
                             */
                            fallback: "builtin" | "standin";
                            /** @description The pipeline whose avatar service failed. */
                            pipeline_id: string;
                            /** @description What the service answered, for the operator. */
                            reason: string;
                        } | null) | null) | null;
                        /** @description Minutes charged: minute 0 began when the visitor first received the avatar, each next one a billing interval later while the visitor was in the room with it. */
                        billed_minutes: number;
                        /** @description Whether the visitor's app may direct the agent from the room. */
                        client_control: boolean;
                        /** @description The start's `context`, in full on GET /v1/sessions/{session_id} only: null in lists (see `has_context`), and when none was set. */
                        context: ((string | null) | null) | null;
                        /** Format: date-time */
                        created_at: string;
                        /** @description Credits those minutes cost. */
                        credits_charged: number;
                        /** @description The documents its agent answered from, fixed at the start (the start's `document_ids`, or the identity's then). */
                        document_ids: string[];
                        /** @description Seconds from the start call to the end (to now while running). */
                        duration_seconds: number;
                        /** @enum {string|null|null} */
                        end_reason: "ended_by_api" | "client_left" | "no_join" | "max_duration" | "insufficient_credits" | "room_closed" | "agent_unavailable" | "service_restarting" | "idle" | "agent_ended" | null;
                        /** Format: date-time */
                        ended_at: ((string | null) | null) | null;
                        /** @enum {string|null|null} */
                        form_factor: "phone" | "desktop" | null;
                        /** @description The greeting the start set ("": none, silent until the visitor speaks); null: the built one. */
                        greeting: ((string | null) | null) | null;
                        /** @description Whether the start set a `context`. */
                        has_context: boolean;
                        identity_id: ((string | null) | null) | null;
                        /** @description Silence before the visitor is asked whether they are still there (and as long again before it ends); 0: never. */
                        idle_timeout_seconds: number;
                        /** Format: date-time */
                        joined_at: ((string | null) | null) | null;
                        /** @enum {string} */
                        language: "auto" | "en" | "es" | "pl" | "uk";
                        /**
                         * @description Whose memory the session read and added to; null: no memory (no visitor, or `memory: false`).
                         * @enum {string|null|null}
                         */
                        memory_scope: "identity" | "account" | null;
                        /** @description Per-session quality, from the agent job's reports of each turn. */
                        metrics: {
                            /** @description The visitor joining → the avatar's first video frame (0 when the avatar was there first). */
                            first_frame_ms: (number | null) | null;
                            /** @description Video frames per second the avatar delivered (target 25); null without a face drawn by the service. */
                            fps: ((number | null) | null) | null;
                            /** @description Agent turns the visitor cut off. */
                            interruptions: number;
                            providers: {
                                /** @description The language model provider: `offline` or the cloud plugin's name; null before the first turn. */
                                llm: ((string | null) | null) | null;
                                /** @description The speech-to-text provider: `offline` or the cloud plugin's name; null before the first turn. */
                                stt: ((string | null) | null) | null;
                                /** @description The text-to-speech provider: `offline` or the cloud plugin's name; null before the first turn. */
                                tts: ((string | null) | null) | null;
                            };
                            /** @description Tool calls the agent made, whatever their outcome. */
                            tool_calls: number;
                            /** @description Agent turns that answered the visitor. */
                            turns: number;
                            /** @description Over the answered turns: the visitor stops speaking → the agent's first audio (the last 500 turns). */
                            voice_to_voice_ms: {
                                /** @description Median. */
                                p50: (number | null) | null;
                                /** @description 95th percentile. */
                                p95: (number | null) | null;
                            };
                        };
                        /**
                         * @description Each field of `outcome_schema`, the value the visitor gave or null for one they did not; written by the session's language model once the session ended with a visitor turn. Null until then, or when it could not be written.
                         * @example {
                         *       "name": "Zofia Nowak",
                         *       "email": "zofia@example.com",
                         *       "wants_demo": true,
                         *       "demo_day": "tuesday"
                         *     }
                         */
                        outcome: (({
                            [key: string]: unknown;
                        } | null) | null) | null;
                        /** @description Why there is no outcome (`failed`). */
                        outcome_detail: ((string | null) | null) | null;
                        /** @description The schema this session's outcome fills (the start's `outcome_schema`, else its identity's); null: no outcome. In full on GET /v1/sessions/{session_id} only: null in lists. */
                        outcome_schema: (({
                            [key: string]: unknown;
                        } | null) | null) | null;
                        /**
                         * @description `none`: no outcome schema, running, or ended without a visitor turn; `pending`: being written; `ready`; `failed`: see `outcome_detail`.
                         * @enum {string}
                         */
                        outcome_status: "none" | "pending" | "ready" | "failed";
                        /** @description Started by a website with this publishable key (POST /v1/embed/sessions); null: by a secret key. */
                        publishable_key_id: ((string | null) | null) | null;
                        /** @description Whether the session is recorded (the start's `record`, else its publishable key's or identity's `record_sessions`); the file: GET /v1/sessions/{session_id}/recording. */
                        record: boolean;
                        /** @description The sentence said before the greeting of this recorded session; null: none. */
                        recording_notice: ((string | null) | null) | null;
                        session_id: string;
                        /** @enum {string} */
                        status: "running" | "ended";
                        /** @description Seconds the avatar streamed, with or without the visitor. */
                        streamed_seconds: number;
                        /** Format: date-time */
                        streaming_started_at: ((string | null) | null) | null;
                        /** @description The conversation in at most three sentences, in the session's language, written by its language model once the session ended with a visitor turn; null until then, or when it could not be written. */
                        summary: ((string | null) | null) | null;
                        /** @description Why there is no summary (`failed`). */
                        summary_detail: ((string | null) | null) | null;
                        /**
                         * @description `none`: running, or ended without a visitor turn; `pending`: being written; `ready`; `failed`: see `summary_detail`.
                         * @enum {string}
                         */
                        summary_status: "none" | "pending" | "ready" | "failed";
                        /**
                         * @description A test resource: made with a test key (`lk_test_…`); it costs nothing and only test keys see it.
                         * @example false
                         */
                        test: boolean;
                        /** @description The tools its agent could call, fixed at the start (the start's `tool_ids`, or the identity's then). */
                        tool_ids: string[];
                        /** @description The start's `visitor_id` (or its visitor token's); null: none, or the visitor was forgotten since. */
                        visitor_id: ((string | null) | null) | null;
                        /** @description Seconds the visitor was in the room with the avatar streaming. */
                        visitor_seconds: number;
                        visual_awareness: boolean;
                    }[];
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
        };
    };
    getSession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                session_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "session_id": "ses_7QmZk4Wp1Hs9Vx2LbR6DnE",
                     *       "status": "ended",
                     *       "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                     *       "avatar_enabled": true,
                     *       "language": "en",
                     *       "visual_awareness": true,
                     *       "form_factor": "phone",
                     *       "test": false,
                     *       "publishable_key_id": null,
                     *       "end_reason": "ended_by_api",
                     *       "billed_minutes": 3,
                     *       "credits_charged": 30,
                     *       "visitor_seconds": 165,
                     *       "streamed_seconds": 165,
                     *       "duration_seconds": 170,
                     *       "created_at": "2026-11-24T09:30:00.000Z",
                     *       "joined_at": "2026-11-24T09:30:04.000Z",
                     *       "streaming_started_at": "2026-11-24T09:30:04.600Z",
                     *       "ended_at": "2026-11-24T09:32:50.000Z",
                     *       "avatar_fallback": null,
                     *       "metrics": {
                     *         "first_frame_ms": 600,
                     *         "voice_to_voice_ms": {
                     *           "p50": 1180,
                     *           "p95": 1720
                     *         },
                     *         "fps": 24.9,
                     *         "turns": 7,
                     *         "interruptions": 1,
                     *         "tool_calls": 1,
                     *         "providers": {
                     *           "stt": "deepgram",
                     *           "llm": "openai-compatible",
                     *           "tts": "elevenlabs"
                     *         }
                     *       },
                     *       "context": "The visitor's name is Zofia. She visited last week and asked about the Orsay museum's opening hours.",
                     *       "has_context": true,
                     *       "greeting": "Welcome back, Zofia! Shall we plan your visit to the Orsay?",
                     *       "client_control": false,
                     *       "idle_timeout_seconds": 120,
                     *       "record": true,
                     *       "recording_notice": "This conversation is recorded.",
                     *       "summary": "The visitor asked which museums to see in one afternoon in Paris. Ada suggested the Musée d’Orsay and the Orangerie, both near the Tuileries. The visitor planned to book Orsay tickets for 2 pm.",
                     *       "summary_status": "ready",
                     *       "summary_detail": null,
                     *       "outcome_schema": {
                     *         "type": "object",
                     *         "properties": {
                     *           "museums": {
                     *             "type": "string",
                     *             "description": "The museums the visitor chose to see"
                     *           },
                     *           "wants_tickets": {
                     *             "type": "boolean",
                     *             "description": "Whether the visitor wants to book tickets"
                     *           }
                     *         }
                     *       },
                     *       "outcome": {
                     *         "museums": "Musée d’Orsay, Orangerie",
                     *         "wants_tickets": true
                     *       },
                     *       "outcome_status": "ready",
                     *       "outcome_detail": null,
                     *       "visitor_id": "crm-4821",
                     *       "memory_scope": "identity",
                     *       "tool_ids": [
                     *         "tool_4Ck2mXbQ9s1LrT0aVnZ7Jp"
                     *       ],
                     *       "document_ids": [
                     *         "doc_8Hn3Qw6Zr1Ys5Vd0Lm2KtB"
                     *       ]
                     *     }
                     */
                    "application/json": {
                        avatar_enabled: boolean;
                        avatar_fallback: (({
                            /**
                             * @description `builtin`: the talking head; `standin`: the photo.
                             * @enum {string}
                             */
                            fallback: "builtin" | "standin";
                            /** @description The pipeline whose avatar service failed. */
                            pipeline_id: string;
                            /** @description What the service answered, for the operator. */
                            reason: string;
                        } | null) | null) | null;
                        /** @description Minutes charged: minute 0 began when the visitor first received the avatar, each next one a billing interval later while the visitor was in the room with it. */
                        billed_minutes: number;
                        /** @description Whether the visitor's app may direct the agent from the room. */
                        client_control: boolean;
                        /** @description The start's `context`, in full on GET /v1/sessions/{session_id} only: null in lists (see `has_context`), and when none was set. */
                        context: ((string | null) | null) | null;
                        /** Format: date-time */
                        created_at: string;
                        /** @description Credits those minutes cost. */
                        credits_charged: number;
                        /** @description The documents its agent answered from, fixed at the start (the start's `document_ids`, or the identity's then). */
                        document_ids: string[];
                        /** @description Seconds from the start call to the end (to now while running). */
                        duration_seconds: number;
                        /** @enum {string|null|null} */
                        end_reason: "ended_by_api" | "client_left" | "no_join" | "max_duration" | "insufficient_credits" | "room_closed" | "agent_unavailable" | "service_restarting" | "idle" | "agent_ended" | null;
                        /** Format: date-time */
                        ended_at: ((string | null) | null) | null;
                        /** @enum {string|null|null} */
                        form_factor: "phone" | "desktop" | null;
                        /** @description The greeting the start set ("": none, silent until the visitor speaks); null: the built one. */
                        greeting: ((string | null) | null) | null;
                        /** @description Whether the start set a `context`. */
                        has_context: boolean;
                        identity_id: ((string | null) | null) | null;
                        /** @description Silence before the visitor is asked whether they are still there (and as long again before it ends); 0: never. */
                        idle_timeout_seconds: number;
                        /** Format: date-time */
                        joined_at: ((string | null) | null) | null;
                        /** @enum {string} */
                        language: "auto" | "en" | "es" | "pl" | "uk";
                        /**
                         * @description Whose memory the session read and added to; null: no memory (no visitor, or `memory: false`).
                         * @enum {string|null|null}
                         */
                        memory_scope: "identity" | "account" | null;
                        /** @description Per-session quality, from the agent job's reports of each turn. */
                        metrics: {
                            /** @description The visitor joining → the avatar's first video frame (0 when the avatar was there first). */
                            first_frame_ms: (number | null) | null;
                            /** @description Video frames per second the avatar delivered (target 25); null without a face drawn by the service. */
                            fps: ((number | null) | null) | null;
                            /** @description Agent turns the visitor cut off. */
                            interruptions: number;
                            providers: {
                                /** @description The language model provider: `offline` or the cloud plugin's name; null before the first turn. */
                                llm: ((string | null) | null) | null;
                                /** @description The speech-to-text provider: `offline` or the cloud plugin's name; null before the first turn. */
                                stt: ((string | null) | null) | null;
                                /** @description The text-to-speech provider: `offline` or the cloud plugin's name; null before the first turn. */
                                tts: ((string | null) | null) | null;
                            };
                            /** @description Tool calls the agent made, whatever their outcome. */
                            tool_calls: number;
                            /** @description Agent turns that answered the visitor. */
                            turns: number;
                            /** @description Over the answered turns: the visitor stops speaking → the agent's first audio (the last 500 turns). */
                            voice_to_voice_ms: {
                                /** @description Median. */
                                p50: (number | null) | null;
                                /** @description 95th percentile. */
                                p95: (number | null) | null;
                            };
                        };
                        /**
                         * @description Each field of `outcome_schema`, the value the visitor gave or null for one they did not; written by the session's language model once the session ended with a visitor turn. Null until then, or when it could not be written.
                         * @example {
                         *       "name": "Zofia Nowak",
                         *       "email": "zofia@example.com",
                         *       "wants_demo": true,
                         *       "demo_day": "tuesday"
                         *     }
                         */
                        outcome: (({
                            [key: string]: unknown;
                        } | null) | null) | null;
                        /** @description Why there is no outcome (`failed`). */
                        outcome_detail: ((string | null) | null) | null;
                        /** @description The schema this session's outcome fills (the start's `outcome_schema`, else its identity's); null: no outcome. In full on GET /v1/sessions/{session_id} only: null in lists. */
                        outcome_schema: (({
                            [key: string]: unknown;
                        } | null) | null) | null;
                        /**
                         * @description `none`: no outcome schema, running, or ended without a visitor turn; `pending`: being written; `ready`; `failed`: see `outcome_detail`.
                         * @enum {string}
                         */
                        outcome_status: "none" | "pending" | "ready" | "failed";
                        /** @description Started by a website with this publishable key (POST /v1/embed/sessions); null: by a secret key. */
                        publishable_key_id: ((string | null) | null) | null;
                        /** @description Whether the session is recorded (the start's `record`, else its publishable key's or identity's `record_sessions`); the file: GET /v1/sessions/{session_id}/recording. */
                        record: boolean;
                        /** @description The sentence said before the greeting of this recorded session; null: none. */
                        recording_notice: ((string | null) | null) | null;
                        session_id: string;
                        /** @enum {string} */
                        status: "running" | "ended";
                        /** @description Seconds the avatar streamed, with or without the visitor. */
                        streamed_seconds: number;
                        /** Format: date-time */
                        streaming_started_at: ((string | null) | null) | null;
                        /** @description The conversation in at most three sentences, in the session's language, written by its language model once the session ended with a visitor turn; null until then, or when it could not be written. */
                        summary: ((string | null) | null) | null;
                        /** @description Why there is no summary (`failed`). */
                        summary_detail: ((string | null) | null) | null;
                        /**
                         * @description `none`: running, or ended without a visitor turn; `pending`: being written; `ready`; `failed`: see `summary_detail`.
                         * @enum {string}
                         */
                        summary_status: "none" | "pending" | "ready" | "failed";
                        /**
                         * @description A test resource: made with a test key (`lk_test_…`); it costs nothing and only test keys see it.
                         * @example false
                         */
                        test: boolean;
                        /** @description The tools its agent could call, fixed at the start (the start's `tool_ids`, or the identity's then). */
                        tool_ids: string[];
                        /** @description The start's `visitor_id` (or its visitor token's); null: none, or the visitor was forgotten since. */
                        visitor_id: ((string | null) | null) | null;
                        /** @description Seconds the visitor was in the room with the avatar streaming. */
                        visitor_seconds: number;
                        visual_awareness: boolean;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    getSessionCaptions: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                session_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description WebVTT: one cue per turn of the conversation, `<v Visitor>` or `<v Agent>`. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/vtt": string;
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "Session not found"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    addSessionContext: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                session_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "text": "The visitor has just opened the returns form.",
                 *       "respond": false
                 *     }
                 */
                "application/json": {
                    /** @description true: the agent answers now with it in mind (cutting off what it says); false (default): it informs the next reply. */
                    respond?: boolean;
                    /** @description Information for the agent, not spoken: its next replies take it into account. At most 32,000 characters over a session. */
                    text: string;
                };
            };
        };
        responses: {
            /** @description The agent took the order: it is being carried out. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "order_id": "ord_5Tm1Hx8Pq3Wz6Lc0Vn2Kd7",
                     *       "session_id": "ses_7QmZk4Wp1Hs9Vx2LbR6DnE",
                     *       "operation": "context"
                     *     }
                     */
                    "application/json": {
                        /** @enum {string} */
                        operation: "say" | "interrupt" | "context";
                        /** @description The order (`ord_…`), as the service log names it. */
                        order_id: string;
                        session_id: string;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "The agent refused the order: The conversation's context is full: its orders may add up to 32000 characters"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
            /** @description An error with a message. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    endSession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                session_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "session_id": "ses_7QmZk4Wp1Hs9Vx2LbR6DnE",
                     *       "status": "ended",
                     *       "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                     *       "pipeline_id": "builtin",
                     *       "mode": "meeting_agent",
                     *       "metadata": {
                     *         "end_reason": "ended_by_api",
                     *         "billed_minutes": 3,
                     *         "credits_charged": 30,
                     *         "visitor_seconds": 165,
                     *         "streamed_seconds": 165,
                     *         "duration_seconds": 170,
                     *         "ended_at": "2026-11-24T09:32:50.000Z",
                     *         "avatar_fallback": null
                     *       }
                     *     }
                     */
                    "application/json": {
                        identity_id: ((string | null) | null) | null;
                        metadata: (({
                            avatar_fallback: (({
                                /**
                                 * @description `builtin`: the talking head; `standin`: the photo.
                                 * @enum {string}
                                 */
                                fallback: "builtin" | "standin";
                                /** @description The pipeline whose avatar service failed. */
                                pipeline_id: string;
                                /** @description What the service answered, for the operator. */
                                reason: string;
                            } | null) | null) | null;
                            /** @description Minutes charged: minute 0 began when the visitor first received the avatar, each next one a billing interval later while the visitor was in the room with it. */
                            billed_minutes: number;
                            /** @description Credits those minutes cost. */
                            credits_charged: number;
                            /** @description Seconds from the start call to the end (to now while running). */
                            duration_seconds: number;
                            /** @enum {string} */
                            end_reason: "ended_by_api" | "client_left" | "no_join" | "max_duration" | "insufficient_credits" | "room_closed" | "agent_unavailable" | "service_restarting" | "idle" | "agent_ended";
                            /** Format: date-time */
                            ended_at: string;
                            /** @description Seconds the avatar streamed, with or without the visitor. */
                            streamed_seconds: number;
                            /** @description Seconds the visitor was in the room with the avatar streaming. */
                            visitor_seconds: number;
                        } | null) | null) | null;
                        /** @constant */
                        mode: "meeting_agent";
                        pipeline_id: ((string | null) | null) | null;
                        session_id: string;
                        /** @constant */
                        status: "ended";
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    interruptSession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                session_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The agent took the order: it is being carried out. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "order_id": "ord_2Vb7Nq4Xw9Lk1Ct6Hs3Rz8",
                     *       "session_id": "ses_7QmZk4Wp1Hs9Vx2LbR6DnE",
                     *       "operation": "interrupt"
                     *     }
                     */
                    "application/json": {
                        /** @enum {string} */
                        operation: "say" | "interrupt" | "context";
                        /** @description The order (`ord_…`), as the service log names it. */
                        order_id: string;
                        session_id: string;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "The session has ended"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    getSessionRecording: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                session_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A session's recording. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "session_id": "ses_7QmZk4Wp1Hs9Vx2LbR6DnE",
                     *       "status": "ready",
                     *       "reason": null,
                     *       "duration_seconds": 168.4,
                     *       "size_bytes": 21734112,
                     *       "store": "service",
                     *       "download_url": "https://likeness.example/assets/recordings/ses_7QmZk4Wp1Hs9Vx2LbR6DnE/recording.mp4?expires=1795586400&signature=Qx1d7m0VtKf3ZrN8bLw2yHc5JpA9sUe4GiO6nTkRjXM",
                     *       "object_key": null,
                     *       "created_at": "2026-11-24T09:30:00.000Z",
                     *       "ready_at": "2026-11-24T09:33:05.000Z",
                     *       "deleted_at": null
                     *     }
                     */
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        /**
                         * Format: date-time
                         * @description When the file was removed (DELETE, or the retention); the recording is still listed.
                         */
                        deleted_at: ((string | null) | null) | null;
                        /** @description A link to the MP4 that expires (ASSET_URL_TTL, at least an hour): read the recording again for a fresh one. Only when ready in the service store, and not deleted. Serves byte ranges (a <video> can seek). */
                        download_url: ((string | null) | null) | null;
                        /** @description The file's length, once ready. */
                        duration_seconds: ((number | null) | null) | null;
                        /** @description The file's key in the account's own bucket (store `customer`). */
                        object_key: ((string | null) | null) | null;
                        /** Format: date-time */
                        ready_at: ((string | null) | null) | null;
                        /** @description Why it failed (`failed`); null otherwise. */
                        reason: ((string | null) | null) | null;
                        session_id: string;
                        size_bytes: (number | null) | null;
                        /**
                         * @description `recording` while the session runs (and briefly after, for its last chunks), `processing` while its parts are joined, `ready` to fetch, `failed` (see `reason`).
                         * @enum {string}
                         */
                        status: "recording" | "processing" | "ready" | "failed";
                        /**
                         * @description Where the file is: `service` (fetch it at `download_url`) or `customer` (the account's own bucket, at `object_key`); null until ready.
                         * @enum {string|null|null}
                         */
                        store: "service" | "customer" | null;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "This session was not recorded"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    deleteSessionRecording: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                session_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 204 */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "The recording is processing: delete it once it is ready or failed"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    saySession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                session_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "text": "Your tickets for 2 pm are booked.",
                 *       "interrupt": true
                 *     }
                 */
                "application/json": {
                    /** @description true (default): cut off what the avatar is saying and say this at once; false: after it. */
                    interrupt?: boolean;
                    /** @description Said exactly as given (surrounding whitespace dropped), in the identity's voice, with its lips. */
                    text: string;
                };
            };
        };
        responses: {
            /** @description The agent took the order: it is being carried out. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "order_id": "ord_8Jq2Lm5Xv0Rk3Wn7Tb1Ys4",
                     *       "session_id": "ses_7QmZk4Wp1Hs9Vx2LbR6DnE",
                     *       "operation": "say"
                     *     }
                     */
                    "application/json": {
                        /** @enum {string} */
                        operation: "say" | "interrupt" | "context";
                        /** @description The order (`ord_…`), as the service log names it. */
                        order_id: string;
                        session_id: string;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
            /** @description An error with a message. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "The session's agent is not in the room yet; retry shortly"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            504: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "The agent did not answer within 5 s; the order may still be carried out"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    getSessionTranscript: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                session_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The session's conversation so far, oldest turn first. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "session_id": "ses_7QmZk4Wp1Hs9Vx2LbR6DnE",
                     *       "turns": [
                     *         {
                     *           "role": "agent",
                     *           "text": "Hello! I am Ada. What would you like to see today?",
                     *           "language": "en",
                     *           "interrupted": false,
                     *           "ordered_by": null,
                     *           "tool_call": null,
                     *           "document_ids": null,
                     *           "started_at": "2026-11-24T09:30:05.000Z",
                     *           "ended_at": "2026-11-24T09:30:08.000Z"
                     *         },
                     *         {
                     *           "role": "user",
                     *           "text": "When does the museum open?",
                     *           "language": "en",
                     *           "interrupted": false,
                     *           "ordered_by": null,
                     *           "tool_call": null,
                     *           "document_ids": null,
                     *           "started_at": "2026-11-24T09:30:10.000Z",
                     *           "ended_at": "2026-11-24T09:30:11.500Z"
                     *         },
                     *         {
                     *           "role": "tool",
                     *           "text": "{\"opens\":\"09:30\",\"closes\":\"18:00\"}",
                     *           "language": null,
                     *           "interrupted": false,
                     *           "ordered_by": null,
                     *           "tool_call": {
                     *             "call_id": "call_7Tq2Wm9Lx4Vb",
                     *             "name": "opening_hours",
                     *             "arguments": {
                     *               "date": "2026-11-24"
                     *             },
                     *             "result_excerpt": "{\"opens\":\"09:30\",\"closes\":\"18:00\"}",
                     *             "duration_ms": 182,
                     *             "outcome": "ok"
                     *           },
                     *           "document_ids": null,
                     *           "started_at": "2026-11-24T09:30:11.600Z",
                     *           "ended_at": "2026-11-24T09:30:11.800Z"
                     *         },
                     *         {
                     *           "role": "agent",
                     *           "text": "Today it opens at 9:30 and closes at 6 pm; on Thursdays it stays open until 9:45.",
                     *           "language": "en",
                     *           "interrupted": false,
                     *           "ordered_by": null,
                     *           "tool_call": null,
                     *           "document_ids": [
                     *             "doc_8Hn3Qw6Zr1Ys5Vd0Lm2KtB"
                     *           ],
                     *           "started_at": "2026-11-24T09:30:11.900Z",
                     *           "ended_at": "2026-11-24T09:30:16.000Z"
                     *         },
                     *         {
                     *           "role": "agent",
                     *           "text": "Your tickets for 2 pm are booked.",
                     *           "language": "en",
                     *           "interrupted": false,
                     *           "ordered_by": "api",
                     *           "tool_call": null,
                     *           "document_ids": null,
                     *           "started_at": "2026-11-24T09:30:17.000Z",
                     *           "ended_at": "2026-11-24T09:30:18.800Z"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        session_id: string;
                        turns: {
                            /** @description An agent turn that answered with passages of these documents in its context; null on other turns and when it used none. */
                            document_ids: ((string[] | null) | null) | null;
                            /** Format: date-time */
                            ended_at: string | null;
                            /** @description An agent turn the visitor cut off; `text` is what was said until then. */
                            interrupted: boolean;
                            /** @description ISO 639-1 code of the language heard or spoken, when known. */
                            language: string | null;
                            /**
                             * @description An agent turn said on an order (docs/api.md#sessions-direct): `api`, the customer's backend (`POST /v1/sessions/{session_id}/say`); `client`, the visitor's app over RPC; null for the conversation's own turns.
                             * @enum {unknown}
                             */
                            ordered_by: "api" | "client" | null;
                            /**
                             * @description `user`: the visitor; `agent`: the identity; `tool`: a tool the agent called.
                             * @enum {string}
                             */
                            role: "user" | "agent" | "tool";
                            /** Format: date-time */
                            started_at: string;
                            text: string;
                            /** @description A `tool` turn's call; null on other turns. */
                            tool_call: (({
                                /** @description The arguments the model gave. */
                                arguments: {
                                    [key: string]: unknown;
                                };
                                /** @description The model's id for the call (a webhook receiver's `call_id`). */
                                call_id: string;
                                duration_ms: number;
                                /** @description The tool called. */
                                name: string;
                                /**
                                 * @description `ok`; `error`: it answered with an error; `timeout`: no answer in the tool’s time; `invalid_arguments`: the arguments broke the tool’s schema and nothing was called.
                                 * @enum {string}
                                 */
                                outcome: "ok" | "error" | "timeout" | "invalid_arguments";
                                /** @description The first 500 characters of the answer, or what went wrong. */
                                result_excerpt: string;
                            } | null) | null) | null;
                        }[];
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    startSession: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description Every field optional; {} starts a default session. */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                 *       "form_factor": "phone",
                 *       "context": "The visitor's name is Zofia. She visited last week and asked about the Orsay museum's opening hours.",
                 *       "greeting": "Welcome back, Zofia! Shall we plan your visit to the Orsay?",
                 *       "idle_timeout_seconds": 120,
                 *       "record": true,
                 *       "recording_notice": "This conversation is recorded."
                 *     }
                 */
                "application/json": {
                    /** @description Adds avatar video; requires an identity. */
                    avatar_enabled?: boolean;
                    /** @description Whether the visitor's app may order say / interrupt / context from the room (LiveKit RPC). Default false. */
                    client_control?: boolean;
                    /** @description Added to the identity's prompt for this session only (who the visitor is, what they bought…); the identity is unchanged. Surrounding whitespace is dropped; blank: none. */
                    context?: string;
                    /** @description The documents (GET /v1/documents) this session's agent answers from, instead of the identity's; [] for none. At most 20, each once, each of this account and not `failed` (422 otherwise). */
                    document_ids?: string[];
                    /**
                     * @description phone: portrait video; desktop: landscape where enabled.
                     * @enum {string}
                     */
                    form_factor?: "phone" | "desktop";
                    /** @description Spoken exactly as given instead of the built greeting (surrounding whitespace dropped). "" (or blank): the agent says nothing until the visitor speaks. */
                    greeting?: string;
                    /** @description Identity to render as the avatar; implies avatar_enabled. */
                    identity_id?: string;
                    /** @description A visitor silent this long is asked whether they are still there; as long again without a word, the session ends `idle`. 0: never. Default: the service's SESSION_IDLE_TIMEOUT_SECONDS (90). */
                    idle_timeout_seconds?: number;
                    /**
                     * @description Per-session override of the identity's language.
                     * @enum {string}
                     */
                    language?: "auto" | "en" | "es" | "pl" | "uk";
                    /** @description Whether this session reads and adds to what is remembered of the visitor. Default true; only with `visitor_id`. */
                    memory?: boolean;
                    /**
                     * @description Whose memory: `identity` (default), what this identity's sessions learned of the visitor; `account`, one memory every identity of the account shares.
                     * @enum {string}
                     */
                    memory_scope?: "identity" | "account";
                    /**
                     * @description The fields to fill in from the conversation once it ends: a JSON Schema of type `object` whose 1–50 `properties` each have a `description` (what the visitor must say for it), in the same subset as a tool's `parameters` (type, description, enum, items, minimum, maximum, minLength, maxLength, properties, required, additionalProperties; at most 16 KB, 5 levels deep).
                     * @example {
                     *       "type": "object",
                     *       "properties": {
                     *         "name": {
                     *           "type": "string",
                     *           "description": "The visitor's name, as they gave it"
                     *         },
                     *         "email": {
                     *           "type": "string",
                     *           "description": "The visitor's email address"
                     *         },
                     *         "wants_demo": {
                     *           "type": "boolean",
                     *           "description": "Whether the visitor asked for a demo"
                     *         },
                     *         "demo_day": {
                     *           "type": "string",
                     *           "enum": [
                     *             "monday",
                     *             "tuesday",
                     *             "wednesday",
                     *             "thursday",
                     *             "friday"
                     *           ],
                     *           "description": "The weekday the visitor picked for the demo"
                     *         }
                     *       }
                     *     }
                     */
                    outcome_schema?: {
                        [key: string]: unknown;
                    };
                    /** @description Record the session: the avatar's video as the visitor saw it and both voices, one MP4 (GET /v1/sessions/{session_id}/recording). Default: the identity's `record_sessions`. */
                    record?: boolean;
                    /** @description A sentence the agent says before its greeting in a recorded session ("This conversation is recorded."). Only with a recorded session (422 otherwise); blank: none. */
                    recording_notice?: string;
                    /** @description The tools (GET /v1/tools) this session's agent may call, instead of the identity's; [] for none. At most 20, each once, each of this account (422 otherwise). */
                    tool_ids?: string[];
                    /** @description Your own id for the person (1–128 of A–Z a–z 0–9 . _ : @ + -): a returning visitor is remembered by it. */
                    visitor_id?: string;
                    /** @description Camera frames accompany speech. Omit for the account default. */
                    visual_awareness?: boolean;
                };
            };
        };
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "room_name": "ses_7QmZk4Wp1Hs9Vx2LbR6DnE",
                     *       "token": "eyJhbGciOiJIUzI1NiJ9.eyJ2aWRlbyI6eyJyb29tIjoic2VzXzdRbVprNFdwMUhzOVZ4MkxiUjZEbkUifX0.c2lnbmF0dXJl",
                     *       "rtc_url": "wss://likeness.example",
                     *       "dispatch_id": "AD_kP3sWq8Lx2Vn",
                     *       "user": {
                     *         "id": "acc_3Jt8Fq1YvKc5Wm0PzN7SgU"
                     *       },
                     *       "created_at": "2026-11-24T09:30:00.000Z",
                     *       "visual_awareness": true,
                     *       "record": true
                     *     }
                     */
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        dispatch_id: string;
                        /** @description Whether the session is recorded: show the visitor a recording mark. */
                        record: boolean;
                        /** @description Also the session id. */
                        room_name: string;
                        /** @description Realtime server URL (wss in production). */
                        rtc_url: string;
                        /** @description Room access token (JWT) for this room and a fresh participant. */
                        token: string;
                        user: {
                            /** @description Account id. */
                            id: string;
                        };
                        /** @description The effective value for this session. */
                        visual_awareness: boolean;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "Insufficient credits: an avatar session needs 12 credits for its first minute"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
            /** @description An error with a message. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    listTools: {
        parameters: {
            query?: {
                after?: string;
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "tool_id": "tool_4Ck2mXbQ9s1LrT0aVnZ7Jp",
                     *         "name": "opening_hours",
                     *         "description": "Look up the shop's opening hours for a day",
                     *         "type": "webhook",
                     *         "parameters": {
                     *           "type": "object",
                     *           "properties": {
                     *             "day": {
                     *               "type": "string",
                     *               "description": "The day the visitor asks about",
                     *               "enum": [
                     *                 "today",
                     *                 "tomorrow"
                     *               ]
                     *             }
                     *           },
                     *           "required": [
                     *             "day"
                     *           ]
                     *         },
                     *         "url": "https://shop.example.com/likeness/tools/opening-hours",
                     *         "timeout_ms": 3000,
                     *         "test": false,
                     *         "created_at": "2026-11-24T09:30:00.000Z",
                     *         "updated_at": "2026-11-24T09:30:00.000Z"
                     *       }
                     *     ]
                     */
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        description: string;
                        /** @example get_weather */
                        name: string;
                        /**
                         * @example {
                         *       "type": "object",
                         *       "properties": {
                         *         "city": {
                         *           "type": "string",
                         *           "description": "The city the visitor asks about"
                         *         },
                         *         "unit": {
                         *           "type": "string",
                         *           "enum": [
                         *             "celsius",
                         *             "fahrenheit"
                         *           ]
                         *         }
                         *       },
                         *       "required": [
                         *         "city"
                         *       ]
                         *     }
                         */
                        parameters: {
                            [key: string]: unknown;
                        };
                        /**
                         * @description A test resource: made with a test key (`lk_test_…`); it costs nothing and only test keys see it.
                         * @example false
                         */
                        test: boolean;
                        timeout_ms: number;
                        /** @example tool_4Ck2mXbQ9s1LrT0aVnZ7Jp */
                        tool_id: string;
                        /** @enum {string} */
                        type: "webhook" | "client" | "end_session";
                        /** Format: date-time */
                        updated_at: string;
                        /** @description Null for client and end_session tools. */
                        url: string | null;
                    }[];
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
        };
    };
    createTool: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "opening_hours",
                 *       "type": "webhook",
                 *       "description": "Look up the shop's opening hours for a day",
                 *       "parameters": {
                 *         "type": "object",
                 *         "properties": {
                 *           "day": {
                 *             "type": "string",
                 *             "description": "The day the visitor asks about",
                 *             "enum": [
                 *               "today",
                 *               "tomorrow"
                 *             ]
                 *           }
                 *         },
                 *         "required": [
                 *           "day"
                 *         ]
                 *       },
                 *       "url": "https://shop.example.com/likeness/tools/opening-hours",
                 *       "timeout_ms": 3000
                 *     }
                 */
                "application/json": {
                    /**
                     * @description What the tool does and when to use it, for the model. Required for webhook and client tools.
                     * @example Look up today's weather in a city
                     */
                    description?: string;
                    /**
                     * @description What the model calls; unique in the account. A client tool's name is also the RPC method.
                     * @example get_weather
                     */
                    name: string;
                    /**
                     * @description A JSON Schema of type `object` for the arguments: `properties` whose schemas use only type (string, number, integer, boolean, array, object), description, enum, items, minimum, maximum, minLength, maxLength, properties, required, additionalProperties; at most 16 KB, 5 levels deep. Default: no arguments.
                     * @example {
                     *       "type": "object",
                     *       "properties": {
                     *         "city": {
                     *           "type": "string",
                     *           "description": "The city the visitor asks about"
                     *         },
                     *         "unit": {
                     *           "type": "string",
                     *           "enum": [
                     *             "celsius",
                     *             "fahrenheit"
                     *           ]
                     *         }
                     *       },
                     *       "required": [
                     *         "city"
                     *       ]
                     *     }
                     */
                    parameters?: {
                        [key: string]: unknown;
                    };
                    /**
                     * @description How long a call may take, in milliseconds; default 5000.
                     * @example 3000
                     */
                    timeout_ms?: number;
                    /**
                     * @description `webhook`: the service POSTs the call, signed, to `url`; `client`: the visitor's app answers it over LiveKit RPC; `end_session`: the agent says goodbye and ends the session.
                     * @enum {string}
                     */
                    type: "webhook" | "client" | "end_session";
                    /**
                     * @description A webhook tool's receiver, http(s). Its host must resolve to public addresses (unless the operator set WEBHOOKS_ALLOW_PRIVATE); checked again at every call.
                     * @example https://example.com/likeness/tools
                     */
                    url?: string;
                };
            };
        };
        responses: {
            /** @description Response for status 201 */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "tool_id": "tool_4Ck2mXbQ9s1LrT0aVnZ7Jp",
                     *       "name": "opening_hours",
                     *       "description": "Look up the shop's opening hours for a day",
                     *       "type": "webhook",
                     *       "parameters": {
                     *         "type": "object",
                     *         "properties": {
                     *           "day": {
                     *             "type": "string",
                     *             "description": "The day the visitor asks about",
                     *             "enum": [
                     *               "today",
                     *               "tomorrow"
                     *             ]
                     *           }
                     *         },
                     *         "required": [
                     *           "day"
                     *         ]
                     *       },
                     *       "url": "https://shop.example.com/likeness/tools/opening-hours",
                     *       "timeout_ms": 3000,
                     *       "test": false,
                     *       "created_at": "2026-11-24T09:30:00.000Z",
                     *       "updated_at": "2026-11-24T09:30:00.000Z",
                     *       "secret": "whsec_4mRq8Zt1Kx6Vn0Pc3Hy9Lb2Wd7Fs5Gj1Qa8Te6Uo0Ik="
                     *     }
                     */
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        description: string;
                        /** @example get_weather */
                        name: string;
                        /**
                         * @example {
                         *       "type": "object",
                         *       "properties": {
                         *         "city": {
                         *           "type": "string",
                         *           "description": "The city the visitor asks about"
                         *         },
                         *         "unit": {
                         *           "type": "string",
                         *           "enum": [
                         *             "celsius",
                         *             "fahrenheit"
                         *           ]
                         *         }
                         *       },
                         *       "required": [
                         *         "city"
                         *       ]
                         *     }
                         */
                        parameters: {
                            [key: string]: unknown;
                        };
                        /** @description A webhook tool's signing secret (`whsec_…`, Standard Webhooks). Shown only in this answer: keep it to verify `webhook-signature`. */
                        secret?: string;
                        /**
                         * @description A test resource: made with a test key (`lk_test_…`); it costs nothing and only test keys see it.
                         * @example false
                         */
                        test: boolean;
                        timeout_ms: number;
                        /** @example tool_4Ck2mXbQ9s1LrT0aVnZ7Jp */
                        tool_id: string;
                        /** @enum {string} */
                        type: "webhook" | "client" | "end_session";
                        /** Format: date-time */
                        updated_at: string;
                        /** @description Null for client and end_session tools. */
                        url: string | null;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "A tool named opening_hours already exists in this account"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": [
                     *         {
                     *           "loc": [
                     *             "body",
                     *             "parameters",
                     *             "properties",
                     *             "day",
                     *             "pattern"
                     *           ],
                     *           "msg": "pattern is not supported on a schema of type string",
                     *           "type": "schema_keyword_unsupported"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
        };
    };
    getTool: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tool_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "tool_id": "tool_4Ck2mXbQ9s1LrT0aVnZ7Jp",
                     *       "name": "opening_hours",
                     *       "description": "Look up the shop's opening hours for a day",
                     *       "type": "webhook",
                     *       "parameters": {
                     *         "type": "object",
                     *         "properties": {
                     *           "day": {
                     *             "type": "string",
                     *             "description": "The day the visitor asks about",
                     *             "enum": [
                     *               "today",
                     *               "tomorrow"
                     *             ]
                     *           }
                     *         },
                     *         "required": [
                     *           "day"
                     *         ]
                     *       },
                     *       "url": "https://shop.example.com/likeness/tools/opening-hours",
                     *       "timeout_ms": 3000,
                     *       "test": false,
                     *       "created_at": "2026-11-24T09:30:00.000Z",
                     *       "updated_at": "2026-11-24T09:30:00.000Z"
                     *     }
                     */
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        description: string;
                        /** @example get_weather */
                        name: string;
                        /**
                         * @example {
                         *       "type": "object",
                         *       "properties": {
                         *         "city": {
                         *           "type": "string",
                         *           "description": "The city the visitor asks about"
                         *         },
                         *         "unit": {
                         *           "type": "string",
                         *           "enum": [
                         *             "celsius",
                         *             "fahrenheit"
                         *           ]
                         *         }
                         *       },
                         *       "required": [
                         *         "city"
                         *       ]
                         *     }
                         */
                        parameters: {
                            [key: string]: unknown;
                        };
                        /**
                         * @description A test resource: made with a test key (`lk_test_…`); it costs nothing and only test keys see it.
                         * @example false
                         */
                        test: boolean;
                        timeout_ms: number;
                        /** @example tool_4Ck2mXbQ9s1LrT0aVnZ7Jp */
                        tool_id: string;
                        /** @enum {string} */
                        type: "webhook" | "client" | "end_session";
                        /** Format: date-time */
                        updated_at: string;
                        /** @description Null for client and end_session tools. */
                        url: string | null;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "Tool not found"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    deleteTool: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tool_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 204 */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    updateTool: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tool_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "timeout_ms": 5000
                 *     }
                 */
                "application/json": {
                    /**
                     * @description What the tool does and when to use it, for the model. Required for webhook and client tools.
                     * @example Look up today's weather in a city
                     */
                    description?: string;
                    /**
                     * @description What the model calls; unique in the account. A client tool's name is also the RPC method.
                     * @example get_weather
                     */
                    name?: string;
                    /**
                     * @description A JSON Schema of type `object` for the arguments: `properties` whose schemas use only type (string, number, integer, boolean, array, object), description, enum, items, minimum, maximum, minLength, maxLength, properties, required, additionalProperties; at most 16 KB, 5 levels deep. Default: no arguments.
                     * @example {
                     *       "type": "object",
                     *       "properties": {
                     *         "city": {
                     *           "type": "string",
                     *           "description": "The city the visitor asks about"
                     *         },
                     *         "unit": {
                     *           "type": "string",
                     *           "enum": [
                     *             "celsius",
                     *             "fahrenheit"
                     *           ]
                     *         }
                     *       },
                     *       "required": [
                     *         "city"
                     *       ]
                     *     }
                     */
                    parameters?: {
                        [key: string]: unknown;
                    };
                    /**
                     * @description How long a call may take, in milliseconds; default 5000.
                     * @example 3000
                     */
                    timeout_ms?: number;
                    /** @description Immutable: sending it answers 422. */
                    type?: string;
                    /**
                     * @description A webhook tool's receiver, http(s). Its host must resolve to public addresses (unless the operator set WEBHOOKS_ALLOW_PRIVATE); checked again at every call.
                     * @example https://example.com/likeness/tools
                     */
                    url?: string;
                };
            };
        };
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "tool_id": "tool_4Ck2mXbQ9s1LrT0aVnZ7Jp",
                     *       "name": "opening_hours",
                     *       "description": "Look up the shop's opening hours for a day",
                     *       "type": "webhook",
                     *       "parameters": {
                     *         "type": "object",
                     *         "properties": {
                     *           "day": {
                     *             "type": "string",
                     *             "description": "The day the visitor asks about",
                     *             "enum": [
                     *               "today",
                     *               "tomorrow"
                     *             ]
                     *           }
                     *         },
                     *         "required": [
                     *           "day"
                     *         ]
                     *       },
                     *       "url": "https://shop.example.com/likeness/tools/opening-hours",
                     *       "timeout_ms": 5000,
                     *       "test": false,
                     *       "created_at": "2026-11-24T09:30:00.000Z",
                     *       "updated_at": "2026-11-24T09:30:01.000Z"
                     *     }
                     */
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        description: string;
                        /** @example get_weather */
                        name: string;
                        /**
                         * @example {
                         *       "type": "object",
                         *       "properties": {
                         *         "city": {
                         *           "type": "string",
                         *           "description": "The city the visitor asks about"
                         *         },
                         *         "unit": {
                         *           "type": "string",
                         *           "enum": [
                         *             "celsius",
                         *             "fahrenheit"
                         *           ]
                         *         }
                         *       },
                         *       "required": [
                         *         "city"
                         *       ]
                         *     }
                         */
                        parameters: {
                            [key: string]: unknown;
                        };
                        /**
                         * @description A test resource: made with a test key (`lk_test_…`); it costs nothing and only test keys see it.
                         * @example false
                         */
                        test: boolean;
                        timeout_ms: number;
                        /** @example tool_4Ck2mXbQ9s1LrT0aVnZ7Jp */
                        tool_id: string;
                        /** @enum {string} */
                        type: "webhook" | "client" | "end_session";
                        /** Format: date-time */
                        updated_at: string;
                        /** @description Null for client and end_session tools. */
                        url: string | null;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
        };
    };
    getUsage: {
        parameters: {
            query?: {
                from?: string;
                granularity?: "day" | "hour";
                to?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "from": "2026-11-23T00:00:00.000Z",
                     *       "to": "2026-11-25T00:00:00.000Z",
                     *       "granularity": "day",
                     *       "buckets": [
                     *         {
                     *           "start": "2026-11-23T00:00:00.000Z",
                     *           "sessions": 0,
                     *           "avatar_minutes": 0,
                     *           "visitor_seconds": 0,
                     *           "streamed_seconds": 0,
                     *           "identities": 0,
                     *           "credits_spent": {
                     *             "onboarding": 0,
                     *             "session_minute": 0,
                     *             "recorded_minute": 0
                     *           },
                     *           "credits_granted": 1000
                     *         },
                     *         {
                     *           "start": "2026-11-24T00:00:00.000Z",
                     *           "sessions": 4,
                     *           "avatar_minutes": 11,
                     *           "visitor_seconds": 598,
                     *           "streamed_seconds": 640,
                     *           "identities": 1,
                     *           "credits_spent": {
                     *             "onboarding": 50,
                     *             "session_minute": 110,
                     *             "recorded_minute": 0
                     *           },
                     *           "credits_granted": 0
                     *         }
                     *       ],
                     *       "totals": {
                     *         "sessions": 4,
                     *         "avatar_minutes": 11,
                     *         "visitor_seconds": 598,
                     *         "streamed_seconds": 640,
                     *         "identities": 1,
                     *         "credits_spent": {
                     *           "onboarding": 50,
                     *           "session_minute": 110,
                     *           "recorded_minute": 0
                     *         },
                     *         "credits_granted": 1000
                     *       }
                     *     }
                     */
                    "application/json": {
                        /** @description Every bucket of the range, oldest first, empty ones included. */
                        buckets: {
                            /** @description Minutes billed while an avatar streamed. */
                            avatar_minutes: number;
                            /** @description Credits added (grants and adjustments). */
                            credits_granted: number;
                            credits_spent: {
                                /** @description Credits spent on identities. */
                                onboarding: number;
                                /** @description Credits spent on recording those minutes (recorded sessions). */
                                recorded_minute: number;
                                /** @description Credits spent on minutes an avatar streamed. */
                                session_minute: number;
                            };
                            /** @description Identities charged for (created and trained). */
                            identities: number;
                            /** @description Sessions started. */
                            sessions: number;
                            /**
                             * Format: date-time
                             * @description The bucket covers [start, start + granularity).
                             */
                            start: string;
                            /** @description Seconds avatars streamed, in the sessions started in the bucket. */
                            streamed_seconds: number;
                            /** @description Seconds visitors were in the room with an avatar, in the sessions started in the bucket. */
                            visitor_seconds: number;
                        }[];
                        /** Format: date-time */
                        from: string;
                        /** @enum {string} */
                        granularity: "day" | "hour";
                        /** Format: date-time */
                        to: string;
                        totals: {
                            /** @description Minutes billed while an avatar streamed. */
                            avatar_minutes: number;
                            /** @description Credits added (grants and adjustments). */
                            credits_granted: number;
                            credits_spent: {
                                /** @description Credits spent on identities. */
                                onboarding: number;
                                /** @description Credits spent on recording those minutes (recorded sessions). */
                                recorded_minute: number;
                                /** @description Credits spent on minutes an avatar streamed. */
                                session_minute: number;
                            };
                            /** @description Identities charged for (created and trained). */
                            identities: number;
                            /** @description Sessions started. */
                            sessions: number;
                            /** @description Seconds avatars streamed, in the sessions started in the bucket. */
                            streamed_seconds: number;
                            /** @description Seconds visitors were in the room with an avatar, in the sessions started in the bucket. */
                            visitor_seconds: number;
                        };
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
        };
    };
    createVisitorToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "visitor_id": "crm-4821",
                 *       "ttl_seconds": 3600
                 *     }
                 */
                "application/json": {
                    /**
                     * @description Whose memory: `identity` (default), what this identity's sessions learned of the visitor; `account`, one memory every identity of the account shares.
                     * @enum {string}
                     */
                    memory_scope?: "identity" | "account";
                    /** @description How long the page may start with it; default 3600. */
                    ttl_seconds?: number;
                    /** @description Your own id for the person (1–128 of A–Z a–z 0–9 . _ : @ + -): a returning visitor is remembered by it. */
                    visitor_id: string;
                };
            };
        };
        responses: {
            /** @description Response for status 201 */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "visitor_token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJhY2MiOiJhY2NfMSIsInNjb3BlIjoiaWRlbnRpdHkiLCJzdWIiOiJjcm0tNDgyMSJ9.c2lnbmF0dXJl",
                     *       "visitor_id": "crm-4821",
                     *       "memory_scope": "identity",
                     *       "expires_at": "2026-11-29T09:00:00.000Z"
                     *     }
                     */
                    "application/json": {
                        /** Format: date-time */
                        expires_at: string;
                        /** @enum {string} */
                        memory_scope: "identity" | "account";
                        visitor_id: string;
                        /** @description For <likeness-avatar visitor-token="…"> (or `visitor_token` at POST /v1/embed/sessions). */
                        visitor_token: string;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
        };
    };
    listVisitors: {
        parameters: {
            query?: {
                after?: string;
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "visitor_id": "crm-4821",
                     *         "facts": [
                     *           {
                     *             "text": "Her name is Zofia.",
                     *             "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                     *             "learned_at": "2026-11-27T09:42:10.000Z",
                     *             "session_id": "ses_9Lq2Wd7Hs3Vx1KbR6DnZmE"
                     *           },
                     *           {
                     *             "text": "She is allergic to peanuts.",
                     *             "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                     *             "learned_at": "2026-11-27T09:42:10.000Z",
                     *             "session_id": "ses_9Lq2Wd7Hs3Vx1KbR6DnZmE"
                     *           },
                     *           {
                     *             "text": "She wants a cake for her daughter’s birthday on Saturday.",
                     *             "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                     *             "learned_at": "2026-11-28T17:05:33.000Z",
                     *             "session_id": "ses_3Hc8Np1Ws6Qa0YtL5MkVbR"
                     *           }
                     *         ],
                     *         "created_at": "2026-11-27T09:30:00.000Z",
                     *         "updated_at": "2026-11-28T17:05:33.000Z",
                     *         "last_session_at": "2026-11-28T16:58:02.000Z"
                     *       }
                     *     ]
                     */
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        /** @description Oldest first, per identity and shared. */
                        facts: {
                            /** @description The identity whose sessions remember it (`memory_scope: identity`); null: the account's shared memory. */
                            identity_id: ((string | null) | null) | null;
                            /** Format: date-time */
                            learned_at: string;
                            /** @description The session it was learned in; null: written with PATCH. */
                            session_id: ((string | null) | null) | null;
                            /** @description One thing remembered, in a sentence. */
                            text: string;
                        }[];
                        /**
                         * Format: date-time
                         * @description The last session started with this visitor.
                         */
                        last_session_at: ((string | null) | null) | null;
                        /** Format: date-time */
                        updated_at: string;
                        visitor_id: string;
                    }[];
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
        };
    };
    getVisitor: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                visitor_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "visitor_id": "crm-4821",
                     *       "facts": [
                     *         {
                     *           "text": "Her name is Zofia.",
                     *           "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                     *           "learned_at": "2026-11-27T09:42:10.000Z",
                     *           "session_id": "ses_9Lq2Wd7Hs3Vx1KbR6DnZmE"
                     *         },
                     *         {
                     *           "text": "She is allergic to peanuts.",
                     *           "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                     *           "learned_at": "2026-11-27T09:42:10.000Z",
                     *           "session_id": "ses_9Lq2Wd7Hs3Vx1KbR6DnZmE"
                     *         },
                     *         {
                     *           "text": "She wants a cake for her daughter’s birthday on Saturday.",
                     *           "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                     *           "learned_at": "2026-11-28T17:05:33.000Z",
                     *           "session_id": "ses_3Hc8Np1Ws6Qa0YtL5MkVbR"
                     *         }
                     *       ],
                     *       "created_at": "2026-11-27T09:30:00.000Z",
                     *       "updated_at": "2026-11-28T17:05:33.000Z",
                     *       "last_session_at": "2026-11-28T16:58:02.000Z"
                     *     }
                     */
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        /** @description Oldest first, per identity and shared. */
                        facts: {
                            /** @description The identity whose sessions remember it (`memory_scope: identity`); null: the account's shared memory. */
                            identity_id: ((string | null) | null) | null;
                            /** Format: date-time */
                            learned_at: string;
                            /** @description The session it was learned in; null: written with PATCH. */
                            session_id: ((string | null) | null) | null;
                            /** @description One thing remembered, in a sentence. */
                            text: string;
                        }[];
                        /**
                         * Format: date-time
                         * @description The last session started with this visitor.
                         */
                        last_session_at: ((string | null) | null) | null;
                        /** Format: date-time */
                        updated_at: string;
                        visitor_id: string;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "Visitor not found"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    forgetVisitor: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                visitor_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 204 */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    updateVisitor: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                visitor_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "facts": [
                 *         {
                 *           "text": "Her name is Zofia.",
                 *           "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA"
                 *         },
                 *         {
                 *           "text": "She is allergic to peanuts and tree nuts.",
                 *           "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    /** @description What is remembered from now on, replacing every fact: a fact kept as it was keeps when and where it was learned. At most 20 per identity and for the account, 1000 in all. [] forgets every fact and keeps the visitor. */
                    facts: {
                        /** @description An identity of the account; null or absent: the account's shared memory. */
                        identity_id?: ((string | null) | null) | null;
                        text: string;
                    }[];
                };
            };
        };
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "visitor_id": "crm-4821",
                     *       "facts": [
                     *         {
                     *           "text": "Her name is Zofia.",
                     *           "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                     *           "learned_at": "2026-11-27T09:42:10.000Z",
                     *           "session_id": "ses_9Lq2Wd7Hs3Vx1KbR6DnZmE"
                     *         },
                     *         {
                     *           "text": "She is allergic to peanuts and tree nuts.",
                     *           "identity_id": "idn_5XwBbH2Lr8Nd0qVjYc3TfA",
                     *           "learned_at": "2026-11-29T08:00:00.000Z",
                     *           "session_id": null
                     *         }
                     *       ],
                     *       "created_at": "2026-11-27T09:30:00.000Z",
                     *       "updated_at": "2026-11-29T08:00:00.000Z",
                     *       "last_session_at": "2026-11-28T16:58:02.000Z"
                     *     }
                     */
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        /** @description Oldest first, per identity and shared. */
                        facts: {
                            /** @description The identity whose sessions remember it (`memory_scope: identity`); null: the account's shared memory. */
                            identity_id: ((string | null) | null) | null;
                            /** Format: date-time */
                            learned_at: string;
                            /** @description The session it was learned in; null: written with PATCH. */
                            session_id: ((string | null) | null) | null;
                            /** @description One thing remembered, in a sentence. */
                            text: string;
                        }[];
                        /**
                         * Format: date-time
                         * @description The last session started with this visitor.
                         */
                        last_session_at: ((string | null) | null) | null;
                        /** Format: date-time */
                        updated_at: string;
                        visitor_id: string;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": [
                     *         {
                     *           "loc": [
                     *             "body",
                     *             "facts",
                     *             1,
                     *             "identity_id"
                     *           ],
                     *           "msg": "No identity idn_0000000000000000000000 in this account",
                     *           "type": "unknown_identity"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
        };
    };
    listVoices: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example [
                     *       {
                     *         "voice_id": "adam",
                     *         "name": "Adam",
                     *         "description": "Deep, calm, American",
                     *         "gender": "male",
                     *         "multilingual": true,
                     *         "languages": [
                     *           "auto",
                     *           "en",
                     *           "es",
                     *           "pl",
                     *           "uk"
                     *         ]
                     *       }
                     *     ]
                     */
                    "application/json": {
                        description: string;
                        gender: string;
                        /** @description The pinned language modes it speaks. */
                        languages: string[];
                        /** @description Speaks every language mode; English-only voices allow only `en` sessions. */
                        multilingual: boolean;
                        name: string;
                        /** @description Send as `voice_id` when creating or updating an identity. */
                        voice_id: string;
                    }[];
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    listWebhooks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "webhooks": [
                     *         {
                     *           "webhook_id": "whk_4Tq8Zn1Vc6Lm3Rx9Pw2KdJ",
                     *           "url": "https://crm.example.com/likeness/events",
                     *           "events": [
                     *             "session.ended",
                     *             "credits.low"
                     *           ],
                     *           "description": "Billing system",
                     *           "enabled": true,
                     *           "test": false,
                     *           "created_at": "2026-11-24T09:30:00.000Z",
                     *           "updated_at": "2026-11-24T09:30:00.000Z"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        /** @description Newest first. */
                        webhooks: {
                            /** Format: date-time */
                            created_at: string;
                            description: string | null;
                            enabled: boolean;
                            events: ("session.started" | "session.ended" | "session.summary_ready" | "session.outcome_ready" | "recording.ready" | "recording.failed" | "identity.ready" | "identity.training_failed" | "document.ready" | "document.failed" | "credits.low" | "visitor.memory_updated")[];
                            /**
                             * @description A test resource: made with a test key (`lk_test_…`); it costs nothing and only test keys see it.
                             * @example false
                             */
                            test: boolean;
                            /** Format: date-time */
                            updated_at: string;
                            url: string;
                            webhook_id: string;
                        }[];
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "url": "https://crm.example.com/likeness/events",
                 *       "events": [
                 *         "session.ended",
                 *         "credits.low"
                 *       ],
                 *       "description": "Billing system"
                 *     }
                 */
                "application/json": {
                    description?: string;
                    /** @description Default true; a disabled endpoint receives nothing. */
                    enabled?: boolean;
                    /** @description The events this endpoint receives. */
                    events: ("session.started" | "session.ended" | "session.summary_ready" | "session.outcome_ready" | "recording.ready" | "recording.failed" | "identity.ready" | "identity.training_failed" | "document.ready" | "document.failed" | "credits.low" | "visitor.memory_updated")[];
                    /**
                     * @description An http(s) URL. Its host must resolve to public addresses (unless the operator set WEBHOOKS_ALLOW_PRIVATE); checked again at every delivery.
                     * @example https://example.com/likeness/events
                     */
                    url: string;
                };
            };
        };
        responses: {
            /** @description Response for status 201 */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "webhook_id": "whk_4Tq8Zn1Vc6Lm3Rx9Pw2KdJ",
                     *       "url": "https://crm.example.com/likeness/events",
                     *       "events": [
                     *         "session.ended",
                     *         "credits.low"
                     *       ],
                     *       "description": "Billing system",
                     *       "enabled": true,
                     *       "test": false,
                     *       "created_at": "2026-11-24T09:30:00.000Z",
                     *       "updated_at": "2026-11-24T09:30:00.000Z",
                     *       "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw2bK8rV2zQ+E="
                     *     }
                     */
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        description: string | null;
                        enabled: boolean;
                        events: ("session.started" | "session.ended" | "session.summary_ready" | "session.outcome_ready" | "recording.ready" | "recording.failed" | "identity.ready" | "identity.training_failed" | "document.ready" | "document.failed" | "credits.low" | "visitor.memory_updated")[];
                        /** @description The signing secret (`whsec_…`, Standard Webhooks). Shown only in this answer: keep it to verify `webhook-signature`. */
                        secret: string;
                        /**
                         * @description A test resource: made with a test key (`lk_test_…`); it costs nothing and only test keys see it.
                         * @example false
                         */
                        test: boolean;
                        /** Format: date-time */
                        updated_at: string;
                        url: string;
                        webhook_id: string;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": [
                     *         {
                     *           "loc": [
                     *             "body",
                     *             "url"
                     *           ],
                     *           "msg": "url: 10.0.0.7 is not a public address (private, loopback, link-local or reserved)",
                     *           "type": "url_not_allowed"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
        };
    };
    getWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "webhook_id": "whk_4Tq8Zn1Vc6Lm3Rx9Pw2KdJ",
                     *       "url": "https://crm.example.com/likeness/events",
                     *       "events": [
                     *         "session.ended",
                     *         "credits.low"
                     *       ],
                     *       "description": "Billing system",
                     *       "enabled": true,
                     *       "test": false,
                     *       "created_at": "2026-11-24T09:30:00.000Z",
                     *       "updated_at": "2026-11-24T09:30:00.000Z"
                     *     }
                     */
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        description: string | null;
                        enabled: boolean;
                        events: ("session.started" | "session.ended" | "session.summary_ready" | "session.outcome_ready" | "recording.ready" | "recording.failed" | "identity.ready" | "identity.training_failed" | "document.ready" | "document.failed" | "credits.low" | "visitor.memory_updated")[];
                        /**
                         * @description A test resource: made with a test key (`lk_test_…`); it costs nothing and only test keys see it.
                         * @example false
                         */
                        test: boolean;
                        /** Format: date-time */
                        updated_at: string;
                        url: string;
                        webhook_id: string;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "detail": "Webhook not found"
                     *     }
                     */
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 204 */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
    updateWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "enabled": false
                 *     }
                 */
                "application/json": {
                    description?: string | null;
                    enabled?: boolean;
                    /** @description The events this endpoint receives. */
                    events?: ("session.started" | "session.ended" | "session.summary_ready" | "session.outcome_ready" | "recording.ready" | "recording.failed" | "identity.ready" | "identity.training_failed" | "document.ready" | "document.failed" | "credits.low" | "visitor.memory_updated")[];
                    /**
                     * @description An http(s) URL. Its host must resolve to public addresses (unless the operator set WEBHOOKS_ALLOW_PRIVATE); checked again at every delivery.
                     * @example https://example.com/likeness/events
                     */
                    url?: string;
                };
            };
        };
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "webhook_id": "whk_4Tq8Zn1Vc6Lm3Rx9Pw2KdJ",
                     *       "url": "https://crm.example.com/likeness/events",
                     *       "events": [
                     *         "session.ended",
                     *         "credits.low"
                     *       ],
                     *       "description": "Billing system",
                     *       "enabled": false,
                     *       "test": false,
                     *       "created_at": "2026-11-24T09:30:00.000Z",
                     *       "updated_at": "2026-11-24T09:30:00.000Z"
                     *     }
                     */
                    "application/json": {
                        /** Format: date-time */
                        created_at: string;
                        description: string | null;
                        enabled: boolean;
                        events: ("session.started" | "session.ended" | "session.summary_ready" | "session.outcome_ready" | "recording.ready" | "recording.failed" | "identity.ready" | "identity.training_failed" | "document.ready" | "document.failed" | "credits.low" | "visitor.memory_updated")[];
                        /**
                         * @description A test resource: made with a test key (`lk_test_…`); it costs nothing and only test keys see it.
                         * @example false
                         */
                        test: boolean;
                        /** Format: date-time */
                        updated_at: string;
                        url: string;
                        webhook_id: string;
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
        };
    };
    listWebhookDeliveries: {
        parameters: {
            query?: {
                limit?: number;
            };
            header?: never;
            path: {
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 200 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "deliveries": [
                     *         {
                     *           "delivery_id": "dlv_6Yh3Mk8Pq1Wz5Cv0Nt7RbS",
                     *           "message_id": "msg_0Lr4Tw9Xe2Jd6Fq3Vn8HaK",
                     *           "event_type": "session.ended",
                     *           "status": "delivered",
                     *           "attempts": 2,
                     *           "response_status": 200,
                     *           "last_error": null,
                     *           "next_attempt_at": null,
                     *           "created_at": "2026-11-24T09:32:50.000Z",
                     *           "delivered_at": "2026-11-24T09:32:55.300Z",
                     *           "attempt_log": [
                     *             {
                     *               "at": "2026-11-24T09:32:50.020Z",
                     *               "status_code": 503,
                     *               "error": "answered 503: upstream unavailable",
                     *               "duration_ms": 41
                     *             },
                     *             {
                     *               "at": "2026-11-24T09:32:55.250Z",
                     *               "status_code": 200,
                     *               "error": null,
                     *               "duration_ms": 38
                     *             }
                     *           ]
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": {
                        deliveries: {
                            /** @description The last attempts, oldest first. */
                            attempt_log: {
                                /** Format: date-time */
                                at: string;
                                duration_ms: number;
                                error: string | null;
                                /** @description The receiver's HTTP status; null when none came (timeout, refused address, network). */
                                status_code: number | null;
                            }[];
                            attempts: number;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            delivered_at: string | null;
                            delivery_id: string;
                            event_type: string;
                            last_error: string | null;
                            /** @description The `webhook-id` header: the same on every retry; deduplicate on it. */
                            message_id: string;
                            /**
                             * Format: date-time
                             * @description When a pending delivery is tried again.
                             */
                            next_attempt_at: string | null;
                            /** @description The last attempt's HTTP status. */
                            response_status: number | null;
                            /**
                             * @description `pending`: not yet delivered (a retry is scheduled); `delivered`: a 2xx came back; `failed`: every retry failed.
                             * @enum {string}
                             */
                            status: "pending" | "delivered" | "failed";
                        }[];
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description Field-level validation problems. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: {
                            loc: (string | number)[];
                            msg: string;
                            type: string;
                        }[];
                    };
                };
            };
        };
    };
    testWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                webhook_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Response for status 202 */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "delivery_id": "dlv_2Nw7Xc4Rt9Kp1Vm6Hb3ZqL",
                     *       "message_id": "msg_8Fj2Lq5Wc0Ys7Dn4Tx1VaR",
                     *       "event_type": "webhook.test",
                     *       "status": "pending",
                     *       "attempts": 0,
                     *       "response_status": null,
                     *       "last_error": null,
                     *       "next_attempt_at": "2026-11-24T09:30:00.000Z",
                     *       "created_at": "2026-11-24T09:32:50.000Z",
                     *       "delivered_at": null,
                     *       "attempt_log": []
                     *     }
                     */
                    "application/json": {
                        /** @description The last attempts, oldest first. */
                        attempt_log: {
                            /** Format: date-time */
                            at: string;
                            duration_ms: number;
                            error: string | null;
                            /** @description The receiver's HTTP status; null when none came (timeout, refused address, network). */
                            status_code: number | null;
                        }[];
                        attempts: number;
                        /** Format: date-time */
                        created_at: string;
                        /** Format: date-time */
                        delivered_at: string | null;
                        delivery_id: string;
                        event_type: string;
                        last_error: string | null;
                        /** @description The `webhook-id` header: the same on every retry; deduplicate on it. */
                        message_id: string;
                        /**
                         * Format: date-time
                         * @description When a pending delivery is tried again.
                         */
                        next_attempt_at: string | null;
                        /** @description The last attempt's HTTP status. */
                        response_status: number | null;
                        /**
                         * @description `pending`: not yet delivered (a retry is scheduled); `delivered`: a 2xx came back; `failed`: every retry failed.
                         * @enum {string}
                         */
                        status: "pending" | "delivered" | "failed";
                    };
                };
            };
            /** @description An error with a message. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
            /** @description An error with a message. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        detail: string;
                    };
                };
            };
        };
    };
}
