// What the Slack adapter's kernel tests share: the modules a kernel needs for the channels module and this adapter.
export const MODULES = ['agents', 'auth', 'error-envelope', 'secrets', 'net', 'tasks', 'commands', 'bindings', 'channels', 'channel-slack'];
