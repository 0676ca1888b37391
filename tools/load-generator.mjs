// autocannon over several paths of one server, for `tools/bench-api.ts` (run as a child process so
// the load generator never shares the API's process). Each connection walks the paths in turn from
// its own starting point, so concurrent requests rarely ask for the same one.
// argv[2]: JSON { origin, paths, connections, seconds }; prints autocannon's result as JSON.
import autocannon from 'autocannon';

const { origin, paths, connections, seconds } = JSON.parse(process.argv[2]);
let nextStart = 0;
const result = await autocannon({
  url: origin,
  connections,
  duration: seconds,
  requests: [{
    setupRequest: (request, context) => {
      context.index ??= (nextStart += 7) % paths.length;
      context.index = (context.index + 1) % paths.length;
      return { ...request, path: paths[context.index] };
    },
  }],
});
process.stdout.write(JSON.stringify(result));
