// What the WhatsApp adapter's kernel tests share: the modules a kernel needs for the channels module and this adapter.
export const MODULES = ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-whatsapp'];

/** The configure body that points the adapter at a fake. */
export const configureFor = (fake: { token: string; phoneNumberId: string; verifyToken: string; appSecret: string; apiUrl: string }) => ({
  mode: 'cloud',
  token: fake.token,
  phone_number_id: fake.phoneNumberId,
  verify_token: fake.verifyToken,
  app_secret: fake.appSecret,
  api_url: fake.apiUrl,
});
