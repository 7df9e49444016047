export { startTestKernel } from './kernel.ts';
export type { TestKernel, TestKernelOptions } from './kernel.ts';
export { startAgentTestKernel, AGENT_TEST_KEY_ENV } from './agent-kernel.ts';
export type { AgentTestKernel, AgentTestKernelOptions } from './agent-kernel.ts';
export { setConfig } from './config.ts';
export { FakeProvider, fakeEmbedding } from './fake-provider.ts';
export type { ScriptedReply, ScriptedToolCall, RecordedRequest } from './fake-provider.ts';
export { waitFor } from './wait.ts';
export { freePort } from './servers/process.ts';
export { gitHttpServer } from './git-server.ts';
export { startLlmHarness, LLM_TEST_KEY_ENV, userMessage, collect, weatherTool } from './llm.ts';
export type {
  LlmHarness,
  TestLlm,
  TestModelRef,
  TestMessage,
  TestBlock,
  TestRequest,
  TestResult,
  TestStreamEvent,
  TestCallRecord,
  TestCallCheck,
} from './llm.ts';
export { driverConformance } from './driver-conformance.ts';
export type { DriverConformanceOptions } from './driver-conformance.ts';
export { openTestStore, openPostgresTestStore, openTestDbStore, openKernelStore, refuseWrites } from './store.ts';
export type { TestStore, PostgresTestStore } from './store.ts';
// A real PostgreSQL (Debian's binaries), one per test process: fresh databases for stores and kernels.
export { startPostgres, postgresMissing, type PostgresServer } from './servers/postgres.ts';
export { eventChannel } from './events.ts';
// The kernel's event bus, for unit tests of a module's subscribers without a kernel.
export { EventBus } from '../../kernel/events.ts';
// Real servers for the channel adapters' tests (Debian's ngircd and dovecot, the smtp-server sink), on 127.0.0.1.
export { startIrcServer, ircServerMissing } from './servers/irc.ts';
export type { IrcServer, IrcServerOptions } from './servers/irc.ts';
export { startXmppServer, xmppServerMissing, type XmppServer, type XmppServerOptions } from './servers/xmpp.ts';
export { startImapServer, imapServerMissing } from './servers/imap.ts';
export type { ImapServer, ImapServerOptions } from './servers/imap.ts';
export { startMqttServer, mqttServerMissing, type MqttServer, type MqttServerOptions } from './servers/mqtt.ts';
export { startSmtpSink } from '../../test/fakes/smtp/sink.ts';
export type { SmtpSink, SmtpSinkOptions, SmtpMessage } from '../../test/fakes/smtp/sink.ts';
// Fakes of the platforms that have no server of their own, speaking their wire protocols (test/fakes/README.md).
export { startTelegramFake } from '../../test/fakes/telegram/server.ts';
export type { TelegramFake, TelegramFakeOptions } from '../../test/fakes/telegram/server.ts';
export { startNtfyFake, type NtfyFake, type NtfyFakeOptions, type NtfyMessage } from '../../test/fakes/ntfy/server.ts';
export { startLineFake, type LineFake, type LineFakeOptions, type LineSource, type LineMessageInput } from '../../test/fakes/line/server.ts';
export { startGoogleChatFake, type GoogleChatFake, type ChatEventInput, type GoogleChatMessage } from '../../test/fakes/google-chat/server.ts';
export { startDiscordFake, Intents as DiscordIntents } from '../../test/fakes/discord/server.ts';
export type { DiscordFake, DiscordFakeOptions } from '../../test/fakes/discord/server.ts';
export { startSlackFake } from '../../test/fakes/slack/server.ts';
export { startSignalFake, type SignalFake, type SignalFakeOptions, type SignalSent } from '../../test/fakes/signal/server.ts';
export { startZulipFake, type ZulipFake, type ZulipFakeOptions, type ZulipMessageRecord } from '../../test/fakes/zulip/server.ts';
export { startMattermostFake, type MattermostFake, type MattermostPostRecord } from '../../test/fakes/mattermost/server.ts';
export { startRocketChatFake, type RocketChatFake, type RocketChatMessageRecord } from '../../test/fakes/rocketchat/server.ts';
export { startMatrixFake, type MatrixFake, type MatrixFakeOptions, type MatrixEventRecord } from '../../test/fakes/matrix/server.ts';
export type { SlackFake, SlackFakeOptions } from '../../test/fakes/slack/server.ts';
export { startWhatsAppFake, type WhatsAppFake, type WhatsAppFakeOptions, type WhatsAppSent } from '../../test/fakes/whatsapp/server.ts';
export {
  startTeamsFake,
  type TeamsFake,
  type TeamsFakeOptions,
  type TeamsInbound,
  type TeamsSignOptions,
  type TeamsSentActivity,
} from '../../test/fakes/teams/server.ts';
export { channelConformance } from './channel-conformance.ts';
export type { ChannelConformanceOptions, ChannelHarness } from './channel-conformance.ts';
export { mediaConformance, startMediaHarness, clearProviderEnv, assertNoProviderEnv, MEDIA_FAKE_REFUSAL, MEDIA_PROVIDER_ENV } from './media-conformance.ts';
export type { MediaConformanceOptions, MediaHarness, MediaFake, MediaCapability, MediaTestCallRecord } from './media-conformance.ts';
export { samplePng, sampleWav, sampleMp4 } from '../../test/fakes/media-samples.ts';
// The media providers' fakes (Gemini API image and Veo endpoints; MiniMax's envelope, hex audio and async video).
export { startGoogleMediaFake, type GoogleMediaFake, type GoogleMediaFakeOptions, type GoogleRecordedRequest } from '../../test/fakes/google-media-server.ts';
export { startMinimaxFake, type MinimaxFake, type MinimaxFakeOptions, type MinimaxRecordedRequest } from '../../test/fakes/minimax-server.ts';
// The OpenAI-compatible and ElevenLabs media fakes.
export { startOpenaiMediaFake, OPENAI_FAKE_KEY, type OpenaiMediaFake, type OpenaiMediaFakeOptions } from '../../test/fakes/openai-media-server.ts';
export { startElevenlabsFake, ELEVENLABS_FAKE_KEY, type ElevenlabsFake, type ElevenlabsFakeOptions } from '../../test/fakes/elevenlabs-server.ts';
export { toneFile, tonePcm, type FakeMediaRequest } from '../../test/fakes/media-fake-kit.ts';
