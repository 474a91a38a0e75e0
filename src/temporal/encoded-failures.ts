/**
 * The failure converter of workers and clients with a codec key: a failure's message and stack trace travel in
 * its `encodedAttributes`, a payload, which the codec encrypts like every other (the failure's `message` field
 * then reads "Encoded failure"). Without it an error's message (an API's answer, a path, a name) and stack would
 * reach history in clear. Loaded by path (`failureConverterPath`): the worker bundles it into the workflows, and
 * clients decode with it. Decoding needs no option: any SDK restores a failure's message from its attributes.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
