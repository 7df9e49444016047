// Style sheets imported for their side effect; Vite turns them into .css files of the build.
declare module '*.css';
