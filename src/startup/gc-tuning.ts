// Imported first by main.ts, before the modules whose objects the flag concerns.
//
// V8 pretenures an allocation site (allocates its objects straight in the old space)
// once it has seen most of them survive a scavenge. Right after start the young
// generation is small and scavenges come every few requests, so a request's objects are
// often still in flight at one: sites on the request path look long-lived and are
// pretenured for good. From then on every request's objects from those sites sit in the
// old space and keep what they point to alive through scavenges, so each request is
// copied and promoted whole: on a chat request 11 KB promoted instead of 1.8 KB, scavenge
// time per request 3x (bench:chat server CPU per request 450 -> 417 µs). A server's
// long-lived objects are made at start-up and promoted once either way.
import v8 from 'node:v8';

v8.setFlagsFromString('--no-allocation-site-pretenuring');
