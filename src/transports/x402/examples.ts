// What the routes' output examples share (the catalog publishes them beside the output schemas).
// One story runs through them: checkout fails to price a cart line, in one problem and one trace.

/** An absolute URL in an example: documentation, the same on every server. */
export const exampleUrl = (path: string) => `https://patchbay.example.com${path}`;

export const EXAMPLE_ENVIRONMENT = "0b6f5c7e-3d1a-4f2b-9c8d-7e6f5a4b3c2d";
export const EXAMPLE_PROBLEM = {
  id: "prb_3h5k7m9p1r3t5v7x9z1b3d5f",
  title: "TypeError: Cannot read properties of undefined (reading 'sku') for order <n>",
  service: "checkout",
};
export const EXAMPLE_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
