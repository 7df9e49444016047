import { populateForProfile } from '../memory.ts';
populateForProfile('/tmp/mb/talon.db');
