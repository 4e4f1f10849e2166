// A v1-only agent behind the SDK 2.4.0 protocol router: it answers a v2 initialize with protocolVersion 1 (the
// router downgrades the request: the v1 side sees no clientCapabilities).
import { agentProtocolRouter } from "@agentclientprotocol/sdk/experimental/v2";
import { v1App } from "./v1_app.mjs";
import { serve } from "./v2_app.mjs";

serve(agentProtocolRouter().withV1(v1App("ts-v1-agent")));
