// Style sheets imported for their side effect; Vite turns them into .css files of the build.
declare module '*.css';

// The modules' views, made by the build (app/vite.config.mjs, talonViews).
declare module 'virtual:talon-views' {
  const views: import('./lib/views.tsx').BuiltView[];
  export default views;
}
